import * as v from 'valibot';
import { GatewayError } from '../shared/errors.js';
import { GATEWAY_PREFIXES, isGatewayPath } from '../shared/gateway-paths.js';
import type { AccessPolicy } from '../shared/types.js';
import { atMostChars } from './char-length.js';
import { parseWith, requireObject, validationError } from './json-body-validation.js';

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
/** Most entries in one list of an access policy (design.md §5). */
export const MAX_POLICY_ENTRIES = 1000;
/** Longest entry of an access policy's lists, after trimming, in characters (design.md §5). */
export const MAX_POLICY_ENTRY_LENGTH = 320;

const REQUIRED_ON_CREATE = ['name', 'path', 'targetUrl'] as const;
/** Fields a PUT body may carry but that are set by the service; ignored, not errors (design.md §5). */
export const READ_ONLY = ['id', 'createdAt', 'updatedAt'] as const;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** An email address as a policy lists it: one `@` between a local part and a domain, no whitespace. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** A domain as a policy lists it: dot-separated labels, none empty, no `@` or whitespace. */
const DOMAIN = /^[^\s@.]+(\.[^\s@.]+)*$/;
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

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
  v.description(`1 to ${MAX_NAME_LENGTH} characters after trimming`),
  v.trim(),
  v.check((name) => name.length > 0, 'must not be empty'),
  ...atMostChars(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
);

const pathSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.description(
    `The public path prefix: / or /segment/…, segments of A-Z a-z 0-9 . _ ~ -, no empty, . or .. segment, no trailing /; ` +
      `unique ignoring case (409 Path already in use); not at or under ${GATEWAY_PREFIXES.join(', ')}`,
  ),
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
  ...atMostChars(MAX_TARGET_URL_LENGTH, `must be at most ${MAX_TARGET_URL_LENGTH} characters`),
  v.description('An absolute http: or https: URL with a host, without user info, query or fragment; may carry a base path'),
  v.check((url) => !WHITESPACE_OR_CONTROL.test(url), 'must not contain whitespace or control characters'),
  v.check(isAbsoluteHttpUrl, 'must be an absolute http: or https: URL with a host'),
  v.check((url) => !authorityOf(url).includes('@'), 'must not contain user info'),
  v.check((url) => !url.includes('?'), 'must not contain a query'),
  v.check((url) => !url.includes('#'), 'must not contain a fragment'),
);

const descriptionSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`),
);

const booleanSchema = v.boolean('must be a boolean');

/** One entry of an access policy's list: a string, trimmed, not empty, not too long. */
const policyEntry = v.pipe(
  v.string('must contain only strings'),
  v.description(`1 to ${MAX_POLICY_ENTRY_LENGTH} characters after trimming`),
  v.trim(),
  v.check((entry) => entry.length > 0, 'must not contain an empty entry'),
  ...atMostChars(MAX_POLICY_ENTRY_LENGTH, `entries must be at most ${MAX_POLICY_ENTRY_LENGTH} characters`),
);

/** The entry a reason is about, quoted for the message. */
const got = (issue: { input: unknown }): string => `(got ${JSON.stringify(issue.input)})`;

/** Emails are matched case-insensitively (design.md §4.7), so they are kept lowercased. */
const emailEntry = v.pipe(
  policyEntry,
  v.description('An email address: one @, no whitespace; kept lowercased'),
  v.check((entry) => EMAIL.test(entry), (issue) => `must be an email address ${got(issue)}`),
  v.toLowerCase(),
);

/** A domain matches the part after an email's last `@`, case-insensitively (design.md §4.7). */
const domainEntry = v.pipe(
  policyEntry,
  v.description('A domain such as example.com, without @; kept lowercased'),
  v.check((entry) => !entry.includes('@'), (issue) => `must be a domain without @ ${got(issue)}`),
  v.check((entry) => DOMAIN.test(entry), (issue) => `must be a domain such as example.com ${got(issue)}`),
  v.toLowerCase(),
);

/** A list of a policy: an array of `entry`, each kept once, in the order first given. */
const policyList = <T extends v.GenericSchema<unknown, string>>(entry: T) =>
  v.optional(
    v.pipe(
      v.array(entry, 'must be a list of strings'),
      v.maxLength(MAX_POLICY_ENTRIES, `must have at most ${MAX_POLICY_ENTRIES} entries`),
      v.description('Each entry kept once, in the order first given'),
      v.transform((list): string[] => [...new Set(list)]),
    ),
    [],
  );

/**
 * `access` (design.md §4.7): null, or an object of up to four lists (unknown keys refused);
 * groups and subjects kept as written (trimmed), emails and domains lowercased. A policy whose
 * lists are all empty is no policy: null.
 */
const accessSchema = v.pipe(
  v.nullable(
    v.pipe(
      v.custom<object>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), 'must be an object or null'),
      v.strictObject({ groups: policyList(policyEntry), emails: policyList(emailEntry), emailDomains: policyList(domainEntry), subjects: policyList(policyEntry) }),
    ),
  ),
  v.description(
    'Who may use the service once signed in: a caller matching any entry (a group, a verified email or its domain, ' +
      'a subject); null, or all lists empty: any signed-in caller. Needs requireAuth: true',
  ),
  v.transform((policy): AccessPolicy | null => (policy && Object.values(policy).some((list) => list.length > 0) ? policy : null)),
);

const createSchema = v.object({
  name: nameSchema,
  path: pathSchema,
  targetUrl: targetUrlSchema,
  requireAuth: v.optional(booleanSchema, true),
  description: v.optional(descriptionSchema, ''),
  access: v.optional(accessSchema, null),
  forwardAuthorization: v.optional(booleanSchema, false),
});

const updateSchema = v.object({
  name: v.optional(nameSchema),
  path: v.optional(pathSchema),
  targetUrl: v.optional(targetUrlSchema),
  requireAuth: v.optional(booleanSchema),
  description: v.optional(descriptionSchema),
  enabled: v.optional(booleanSchema),
  access: v.optional(accessSchema),
  forwardAuthorization: v.optional(booleanSchema),
});

/**
 * A service as a registry document declares it (design.md §4.9): the create body's fields with
 * the same defaults, and `enabled` (default true); the entry's `id` is ignored.
 */
const entrySchema = v.object({ ...createSchema.entries, enabled: v.optional(booleanSchema, true) });

const toggleSchema = v.object({ enabled: booleanSchema });

/**
 * The bodies' schemas, for the API's description (admin/openapi/), which converts their structure to
 * JSON Schema; what `v.check` and the transforms add is said in words there.
 */
export const SERVICE_BODY_SCHEMAS = { create: createSchema, update: updateSchema, toggle: toggleSchema };

/**
 * A validated create body: `name` trimmed, `requireAuth` defaulted to true, `description` to '',
 * `access` normalised (null when none), `forwardAuthorization` defaulted to false.
 */
export type ServiceCreateInput = v.InferOutput<typeof createSchema>;
/** A validated PUT body: only the fields present, each valid (`access` normalised); read-only fields dropped. */
export type ServicePatch = v.InferOutput<typeof updateSchema>;
/** A validated registry document entry: every writable field of a service, defaults filled in. */
export type ServiceEntryInput = v.InferOutput<typeof entrySchema>;
/** A validated toggle body (interface.md §4.2 PATCH /api/services/:id/toggle). */
export type ToggleInput = v.InferOutput<typeof toggleSchema>;

/**
 * Validates a POST /api/services body (interface.md §4.2, design.md §5).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object` for arrays, null and primitives;
 *   MISSING_FIELDS (exact spec message, `fields` naming what is absent) when `name`, `path` or
 *   `targetUrl` is absent or null; BAD_REQUEST with `fields` for every invalid or unknown field.
 */
export function parseServiceCreate(body: unknown): ServiceCreateInput {
  return parseWhole(createSchema, body, []);
}

/**
 * Validates one service of a registry document (design.md §4.9) by the create body's rules, with
 * `enabled` besides; `id` is ignored (a document's services are matched by path).
 * @throws {GatewayError} as {@link parseServiceCreate}.
 */
export function parseServiceEntry(entry: unknown): ServiceEntryInput {
  return parseWhole(entrySchema, entry, ['id']);
}

/**
 * A whole service (a create body, a document entry): `name`, `path` and `targetUrl` present, every
 * field valid, a policy only with `requireAuth`.
 */
function parseWhole<S extends typeof createSchema | typeof entrySchema>(schema: S, body: unknown, ignored: readonly string[]): v.InferOutput<S> {
  const object = requireObject(body);
  const missing = REQUIRED_ON_CREATE.filter((field) => object[field] === undefined || object[field] === null);
  if (missing.length > 0) {
    throw new GatewayError('MISSING_FIELDS', { fields: Object.fromEntries(missing.map((f) => [f, 'is required'])) });
  }
  const input = parseWith(schema, object, 'Invalid service', ignored);
  assertPolicyNeedsSignIn(input);
  return input;
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
 * A service's access policy applies to signed-in callers, so it needs `requireAuth: true`
 * (design.md §4.7). Checked on the service a create or update would leave, so a PUT that turns
 * `requireAuth` off while a policy stays is refused too.
 * @throws {GatewayError} BAD_REQUEST with `fields.access` `needs requireAuth`.
 */
export function assertPolicyNeedsSignIn(service: { requireAuth: boolean; access?: AccessPolicy | null }): void {
  if (service.access && !service.requireAuth) throw validationError('Invalid service', { access: 'needs requireAuth' }, []);
}

/**
 * Validates a PATCH /api/services/:id/toggle body, `{ "enabled": <boolean> }` (interface.md §4.2).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` when `enabled`
 *   is missing or not a boolean, or another field is present.
 */
export function parseToggle(body: unknown): ToggleInput {
  return parseWith(toggleSchema, requireObject(body), 'Invalid toggle body', []);
}
