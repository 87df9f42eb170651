import * as v from 'valibot';
import { parseWith, requireObject } from '../http/json-body-validation.js';
import { TOKEN_SCOPES } from './token-scope.js';

/**
 * Validation of `POST /api/tokens` bodies (design.md §4.8). Pure: reads an already-parsed JSON value
 * and returns a typed value or throws a GatewayError.
 */

/** Longest token `name` after trimming, in characters. */
export const MAX_TOKEN_NAME_LENGTH = 100;
/** The lifetimes a token may be given, in days; `null` is a token that never expires. */
export const TOKEN_LIFETIMES_DAYS = [30, 90, 365] as const;
/** The lifetime of a token created without `expiresInDays`, in days. */
export const DEFAULT_TOKEN_LIFETIME_DAYS = 90;
const nameSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.check((name) => name.length > 0, 'must not be empty'),
  v.check((name) => [...name].length <= MAX_TOKEN_NAME_LENGTH, `must be at most ${MAX_TOKEN_NAME_LENGTH} characters`),
);

/** One of the scopes of token-scope.ts, spelled as there. */
const scopeSchema = v.pipe(
  v.picklist(TOKEN_SCOPES, 'must be read, write or write sessions'),
  v.description("read: GET and HEAD; write: every method; write sessions: write, and ending an administrator's sessions too"),
);

const createSchema = v.object({
  name: nameSchema,
  scope: scopeSchema,
  expiresInDays: v.optional(
    v.nullable(v.picklist(TOKEN_LIFETIMES_DAYS, `must be ${TOKEN_LIFETIMES_DAYS.join(', ')} or null`)),
    DEFAULT_TOKEN_LIFETIME_DAYS,
  ),
});

/** The body's schema, for the API's description (admin/openapi/). */
export const TOKEN_BODY_SCHEMAS = { create: createSchema };

/** A validated create body: `name` trimmed, `expiresInDays` defaulted to 90 (`null`: never expires). */
export type TokenCreateInput = v.InferOutput<typeof createSchema>;

/**
 * Validates a POST /api/tokens body: `name` (1–100 characters after trimming) and `scope` (`read`,
 * `write` or `write sessions`) required, `expiresInDays` 30, 90 (the
 * default) or 365, or null for a token that never expires.
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or `Invalid API token: …` with
 *   `fields` for every missing, invalid or unknown field.
 */
export function parseTokenCreate(body: unknown): TokenCreateInput {
  return parseWith(createSchema, requireObject(body), 'Invalid API token', []);
}
