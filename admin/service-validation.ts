import * as v from 'valibot';
import { GatewayError } from '../shared/errors.js';
import { GATEWAY_PREFIXES, isGatewayPath } from '../shared/gateway-paths.js';

/**
 * Validation of the admin API's service bodies (interface.md §4.2, design.md §5). Pure functions: they read
 * an already-parsed JSON value and either return a typed value or throw a {@link GatewayError}.
 */

/** Longest `path`, in characters (design.md §5). */
export const MAX_PATH_LENGTH = 200;
/** Longest `targetUrl`, in characters (design.md §5). */
export const MAX_TARGET_URL_LENGTH = 2048;
/** Longest `name` after trimming, in characters (design.md §5). */
export const MAX_NAME_LENGTH = 100;
/** Longest `description`, in characters (design.md §5). */
export const MAX_DESCRIPTION_LENGTH = 1000;

const REQUIRED_ON_CREATE = ['name', 'path', 'targetUrl'] as const;
/** Fields a PUT body may carry but that are set by the service; ignored, not errors (design.md §5). */
const READ_ONLY = ['id', 'createdAt', 'updatedAt'] as const;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/** Length in Unicode code points, so one emoji counts as one character. */
const charCount = (text: string): number => [...text].length;

/** The segments after the leading `/`; none for `/` itself. */
const segmentsOf = (path: string): string[] => (path === '/' ? [] : path.slice(1).split('/'));

/** `http://host…` or `https://host…` in the plain form (no backslashes) that parses as a URL. */
function isAbsoluteHttpUrl(text: string): boolean {
  if (!/^https?:\/\/[^/?#]/i.test(text) || text.includes('\\')) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** The authority (`user@host:port`) of an absolute URL, as written. */
const authorityOf = (url: string): string => url.replace(/^[a-z]+:\/\//i, '').split(/[/?#]/)[0] ?? '';

const nameSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.check((name) => name.length > 0, 'must not be empty'),
  v.check((name) => charCount(name) <= MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
);

const pathSchema = v.pipe(
  v.string('must be a string'),
  v.check((path) => charCount(path) <= MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.startsWith('/', 'must start with /'),
  v.check((path) => path === '/' || !path.endsWith('/'), 'must not end with /'),
  v.check((path) => !segmentsOf(path).includes(''), 'must not contain an empty segment (//)'),
  v.check((path) => segmentsOf(path).every((s) => s !== '.' && s !== '..'), 'must not contain a . or .. segment'),
  v.check((path) => segmentsOf(path).every((s) => SEGMENT.test(s)), 'segments may only contain A-Z a-z 0-9 . _ ~ -'),
  // Only unreserved characters and no empty segments by now, so the routing key is the lowercase form.
  v.check((path) => !isGatewayPath(path.toLowerCase()), `must not be or sit under a gateway path (${GATEWAY_PREFIXES.join(', ')})`),
);

const targetUrlSchema = v.pipe(
  v.string('must be a string'),
  v.check((url) => charCount(url) <= MAX_TARGET_URL_LENGTH, `must be at most ${MAX_TARGET_URL_LENGTH} characters`),
  v.check((url) => !WHITESPACE_OR_CONTROL.test(url), 'must not contain whitespace or control characters'),
  v.check(isAbsoluteHttpUrl, 'must be an absolute http: or https: URL with a host'),
  v.check((url) => !authorityOf(url).includes('@'), 'must not contain user info'),
  v.check((url) => !url.includes('?'), 'must not contain a query'),
  v.check((url) => !url.includes('#'), 'must not contain a fragment'),
);

const descriptionSchema = v.pipe(
  v.string('must be a string'),
  v.check((text) => charCount(text) <= MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`),
);

const booleanSchema = v.boolean('must be a boolean');

const createSchema = v.object({
  name: nameSchema,
  path: pathSchema,
  targetUrl: targetUrlSchema,
  requireAuth: v.optional(booleanSchema, true),
  description: v.optional(descriptionSchema, ''),
});

const updateSchema = v.object({
  name: v.optional(nameSchema),
  path: v.optional(pathSchema),
  targetUrl: v.optional(targetUrlSchema),
  requireAuth: v.optional(booleanSchema),
  description: v.optional(descriptionSchema),
  enabled: v.optional(booleanSchema),
});

const toggleSchema = v.object({ enabled: booleanSchema });

/** A validated create body: `name` trimmed, `requireAuth` defaulted to true, `description` to ''. */
export type ServiceCreateInput = v.InferOutput<typeof createSchema>;
/** A validated PUT body: only the fields present, each valid; read-only fields dropped. */
export type ServicePatch = v.InferOutput<typeof updateSchema>;
/** A validated toggle body (interface.md §4.2 PATCH /api/services/:id/toggle). */
export type ToggleInput = v.InferOutput<typeof toggleSchema>;

/**
 * Validates a POST /api/services body (interface.md §4.2, design.md §5).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object` for arrays, null and primitives;
 *   MISSING_FIELDS (exact spec message, `fields` naming what is absent) when `name`, `path` or
 *   `targetUrl` is absent or null; BAD_REQUEST with `fields` for every invalid or unknown field.
 */
export function parseServiceCreate(body: unknown): ServiceCreateInput {
  const object = requireObject(body);
  const missing = REQUIRED_ON_CREATE.filter((field) => object[field] === undefined || object[field] === null);
  if (missing.length > 0) {
    throw new GatewayError('MISSING_FIELDS', { fields: Object.fromEntries(missing.map((f) => [f, 'is required'])) });
  }
  return parseWith(createSchema, object, 'Invalid service', []);
}

/**
 * Validates a PUT /api/services/:id body: any subset of the writable fields, `enabled` included
 * (design.md §5). `id`, `createdAt` and `updatedAt` are ignored; an empty object is a valid no-op.
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` for every
 *   invalid or unknown field.
 */
export function parseServiceUpdate(body: unknown): ServicePatch {
  const patch = parseWith(updateSchema, requireObject(body), 'Invalid service', READ_ONLY);
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as ServicePatch;
}

/**
 * Validates a PATCH /api/services/:id/toggle body, `{ "enabled": <boolean> }` (interface.md §4.2).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` when `enabled`
 *   is missing or not a boolean, or another field is present.
 */
export function parseToggle(body: unknown): ToggleInput {
  return parseWith(toggleSchema, requireObject(body), 'Invalid toggle body', []);
}

function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('BAD_REQUEST', { message: 'Body must be a JSON object' });
  }
  return body as Record<string, unknown>;
}

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, undefined>;

/**
 * Runs `schema` over the known fields of `object` and reports every problem at once: the first
 * failing rule of each known field, and each field the schema does not know (minus `ignored`).
 */
function parseWith<S extends ObjectSchema>(
  schema: S,
  object: Record<string, unknown>,
  label: string,
  ignored: readonly string[],
): v.InferOutput<S> {
  const known = Object.keys(schema.entries);
  const unknown = Object.keys(object).filter((key) => !known.includes(key) && !ignored.includes(key));
  const input = Object.fromEntries(Object.entries(object).filter(([key]) => known.includes(key)));
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  const invalid = result.success ? {} : fieldReasons(result.issues);
  if (unknown.length > 0 || !result.success) throw validationError(label, invalid, unknown);
  return result.output;
}

/** The first reason per field; a key missing from the object reads `is required`. */
function fieldReasons(issues: readonly v.BaseIssue<unknown>[]): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const issue of issues) {
    const step = issue.path?.[0];
    const field = step && 'key' in step ? String(step.key) : 'body';
    reasons[field] ??= step?.origin === 'key' ? 'is required' : issue.message;
  }
  return reasons;
}

function validationError(label: string, invalid: Record<string, string>, unknown: string[]): GatewayError {
  const parts: string[] = [];
  const invalidEntries = Object.entries(invalid);
  if (invalidEntries.length > 0) parts.push(`${label}: ${invalidEntries.map(([f, why]) => `${f} ${why}`).join('; ')}`);
  if (unknown.length > 0) parts.push(`Unknown fields: ${unknown.join(', ')}`);
  const fields = { ...invalid, ...Object.fromEntries(unknown.map((key) => [key, 'unknown field'])) };
  return new GatewayError('BAD_REQUEST', { message: parts.join('. '), fields });
}
