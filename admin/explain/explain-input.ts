import * as v from 'valibot';
import { isCanonicalPath, pathLength } from '../../shared/routing/canonical-path.js';
import { readHostName } from '../../shared/services/host-names.js';
import type { SessionUser } from '../../shared/types.js';
import { parseWith, requireObject, validationError } from '../http/json-body-validation.js';

/**
 * The question "who can reach this?" (design.md §4.18): `POST /api/services/:id/explain`'s body,
 * and the console's form on the service page (its query). Pure: reads already-parsed values and
 * returns a typed one or throws a GatewayError (400 with `fields`).
 */

/** Longest `path` asked about, in characters: the access log keeps 2,048 bytes of a path. */
export const MAX_EXPLAIN_PATH_LENGTH = 2048;
/** At most so many groups for the caller (an ID token's groups claim is rarely longer). */
export const MAX_EXPLAIN_GROUPS = 100;

/** A request method: an RFC 9110 §9.1 token, as the data plane would take it (compared in capitals). */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;

const pathSchema = v.pipe(
  v.string('must be a string'),
  v.check((path) => path.startsWith('/'), 'must start with /'),
  v.check((path) => path.length <= MAX_EXPLAIN_PATH_LENGTH, `must be at most ${MAX_EXPLAIN_PATH_LENGTH} characters`),
  v.check(
    (path) => isCanonicalPath(path, pathLength(path)),
    'is refused by the gateway before routing (400): a dot segment, NUL, a malformed percent-encoding or #',
  ),
  v.description('The request path as a client sends it (any spelling: case, %2F, ;, //, \\), with the service prefix; a query after ? is ignored'),
);

const text = (max: number) => v.pipe(v.string('must be a string'), v.trim(), v.maxLength(max, `must be at most ${max} characters`));

const userSchema = v.pipe(
  v.strictObject({
    sub: v.optional(v.pipe(text(255), v.description('The subject (sub)'))),
    email: v.optional(v.pipe(text(320), v.description('A verified email'))),
    groups: v.optional(
      v.pipe(
        v.array(text(255), 'must be a list of group names'),
        v.maxLength(MAX_EXPLAIN_GROUPS, `must hold at most ${MAX_EXPLAIN_GROUPS} groups`),
        v.description('The groups claim'),
      ),
    ),
  }),
  v.description('The signed-in caller (a session or a bearer token); absent or null: an anonymous request'),
);

const explainSchema = v.object({
  path: pathSchema,
  method: v.optional(
    v.pipe(v.string('must be a string'), v.regex(METHOD, 'must be an HTTP method (GET, POST, …)'), v.description('Default GET; HEAD is matched as GET')),
    'GET',
  ),
  user: v.optional(v.nullable(userSchema), null),
  host: v.optional(v.pipe(v.string('must be a string'), v.description('The host the request names (Host); absent: as the service is reached'))),
  corsPreflight: v.optional(
    v.pipe(v.boolean('must be true or false'), v.description('true: the OPTIONS request is a browser\'s CORS preflight (Origin and Access-Control-Request-Method, no body)')),
    false,
  ),
});

/** The body's schema, for the API's description (admin/openapi/). */
export const EXPLAIN_BODY_SCHEMA = explainSchema;

/** A question, validated: the caller as the data plane would know them, or undefined when anonymous. */
export interface ExplainInput {
  /** The path without its query. */
  path: string;
  /** In capitals. */
  method: string;
  user: SessionUser | undefined;
  /** The host in its normal form (host-names.ts), or undefined. */
  host: string | undefined;
  corsPreflight: boolean;
}

/**
 * `POST /api/services/:id/explain`'s body as an {@link ExplainInput}.
 * @throws {GatewayError} BAD_REQUEST (400) with `fields` naming every bad or unknown field; a
 *   `corsPreflight` for a method other than OPTIONS, or a `host` that is no host name, too.
 */
export function parseExplainBody(body: unknown): ExplainInput {
  const parsed = parseWith(explainSchema, requireObject(body), 'Invalid question', []);
  const invalid: Record<string, string> = {};
  if (parsed.corsPreflight && parsed.method.toUpperCase() !== 'OPTIONS') invalid.corsPreflight = 'is only for method OPTIONS';
  const host = parsed.host === undefined ? undefined : readHostName(parsed.host, { wildcard: false });
  if (host?.problem !== undefined) invalid.host = host.problem;
  if (Object.keys(invalid).length > 0) throw validationError('Invalid question', invalid, []);
  return {
    path: parsed.path.slice(0, pathLength(parsed.path)),
    method: parsed.method.toUpperCase(),
    user: parsed.user === null ? undefined : callerOf(parsed.user),
    host: host?.name,
    corsPreflight: parsed.corsPreflight,
  };
}

/**
 * The caller as a session would hold them (design.md §4.2: `email` is the verified one), so the
 * access policy reads them as the data plane does. Every field empty still is a signed-in caller.
 */
function callerOf(user: { sub?: string; email?: string; groups?: string[] }): SessionUser {
  const groups = (user.groups ?? []).filter((group) => group !== '');
  return { sub: user.sub ?? '', email: user.email ?? '', name: '', isAdmin: false, groups };
}
