import { createRequire } from 'node:module';
import * as v from 'valibot';
import { ERRORS, type ErrorCode } from '../../shared/errors.js';
import { NOT_AN_OBJECT } from '../http/json-body-validation.js';
import type { ServedOrigin } from '../http/served-origin.js';
import { ENDPOINTS, REQUEST_SCHEMAS, type Endpoint, type Guard } from './endpoints.js';
import { componentSchemas, inlineSchema, type NamedSchemas } from './json-schema.js';
import { RESPONSE_SCHEMAS } from './response-schemas.js';

/** An OpenAPI 3.1 document (OpenAPI Specification 3.1.1 §4.8.1), as JSON. */
export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, OpenApiOperation>> };

type OpenApiOperation = Record<string, unknown>;

/** The package's version, the document's `info.version` (read from dist/admin/openapi/). */
const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

const NAMED: NamedSchemas = { ...REQUEST_SCHEMAS, ...RESPONSE_SCHEMAS };

/** A response header: what it says, and whether every answer of its status carries it. */
interface HeaderSpec {
  description: string;
  required: boolean;
}

/** One way an endpoint can fail: its status, its exact message, whether it has `fields`, its headers. */
interface Failure {
  status: number;
  /** The exact `error`; absent for a validation error, whose message names the fields. */
  message?: string;
  /** Whether the body has `fields` beside `error` (always for a validation error). */
  fields?: true;
  headers?: Record<string, HeaderSpec>;
}

/** The failures whose answer names the fields, with an exact message. */
const WITH_FIELDS: ReadonlySet<ErrorCode> = new Set(['MISSING_FIELDS']);
/**
 * The failures whose answer names the fields or not: PATH_IN_USE names them for a (host, path)
 * pair taken, not for a host-less path (admin/registry/route-uniqueness.ts).
 */
const FIELDS_OR_NOT: ReadonlySet<ErrorCode> = new Set(['PATH_IN_USE']);

const WWW_AUTHENTICATE =
  'Bearer without credentials; Bearer error="invalid_token" for a bearer credential that is no live token; ' +
  'Bearer error="insufficient_scope", scope="write" for a read token asked to change something; ' +
  'Bearer error="insufficient_scope", scope="sessions" for a token without the sessions scope ending an administrator\'s sessions (RFC 6750 §3)';
const challenge = (required: boolean) => ({ 'WWW-Authenticate': { description: WWW_AUTHENTICATE, required } });
const RATE_LIMIT_HEADERS: Record<string, HeaderSpec> = {
  'Retry-After': { description: 'Seconds until the window resets', required: true },
  'RateLimit-Limit': { description: 'Requests allowed per window', required: true },
  'RateLimit-Remaining': { description: 'Requests left in the window', required: true },
  'RateLimit-Reset': { description: 'Seconds until the window resets', required: true },
};

/** The headers of a handler's own failures that have any. */
const ERROR_HEADERS: Partial<Record<ErrorCode, Record<string, HeaderSpec>>> = { SESSIONS_SCOPE_REQUIRED: challenge(true) };

const failure = (code: ErrorCode, headers?: Record<string, HeaderSpec>): Failure => ({
  ...ERRORS[code],
  ...(WITH_FIELDS.has(code) ? { fields: true } : {}),
  ...(headers ? { headers } : {}),
});
/** A validation error: `{ error, fields }`, the message naming each wrong field or parameter. */
const VALIDATION: Failure = { status: ERRORS.BAD_REQUEST.status, fields: true };

/**
 * The answers of a guard (guards.ts) to a request it refuses. `admin`'s 401 always challenges
 * (`WWW-Authenticate`); `adminSession`'s only a bearer credential that is no live token.
 */
function guardFailures(guard: Guard, changes: boolean): Failure[] {
  switch (guard) {
    case 'public':
      return [];
    case 'session':
      return [failure('NOT_AUTHENTICATED')];
    case 'admin':
      return [
        failure('NOT_AUTHENTICATED', challenge(true)),
        failure('ADMIN_REQUIRED'),
        ...(changes ? [failure('INSUFFICIENT_SCOPE', challenge(false)), failure('INVALID_CSRF')] : []),
      ];
    case 'adminSession':
      return [
        failure('NOT_AUTHENTICATED', challenge(false)),
        failure('ADMIN_REQUIRED'),
        failure('TOKENS_CANNOT_MANAGE_TOKENS'),
        ...(changes ? [failure('INVALID_CSRF')] : []),
      ];
  }
}

/** Every way `endpoint` can fail: its guard's, its body's or query's, its own, and any request's. */
function failuresOf(endpoint: Endpoint): Failure[] {
  const body = endpoint.body
    ? [
        failure('INVALID_JSON'),
        { status: ERRORS.BAD_REQUEST.status, message: NOT_AN_OBJECT },
        VALIDATION,
        failure('REQUEST_TIMEOUT'),
        failure('BODY_TOO_LARGE'),
        failure('UNSUPPORTED_MEDIA_TYPE'),
      ]
    : [];
  return [
    ...guardFailures(endpoint.guard, endpoint.method !== 'GET'),
    ...body,
    ...(endpoint.query ? [VALIDATION] : []),
    ...(endpoint.errors ?? []).flatMap((code) => {
      const own = failure(code, ERROR_HEADERS[code]);
      return FIELDS_OR_NOT.has(code) ? [own, { ...own, fields: true as const }] : [own];
    }),
    failure('RATE_LIMITED', RATE_LIMIT_HEADERS),
    failure('INTERNAL'),
  ];
}

/** The exact messages of `failures` with `fields` or without. */
const messagesOf = (failures: Failure[], fields: boolean): string[] => [
  ...new Set(failures.flatMap((f) => (f.message !== undefined && (f.fields === true) === fields ? [f.message] : []))),
];

/**
 * The Responses Object of one status's failures: `{ error }` with one of their exact messages,
 * `{ error, fields }` with one of those that name fields, or a validation error; a header is
 * required when every failure of the status carries it.
 */
function failureResponse(failures: Failure[]): Record<string, unknown> {
  const messages = messagesOf(failures, false);
  const withFields = messagesOf(failures, true);
  const validates = failures.some((f) => f.message === undefined);
  const bodies: v.GenericSchema[] = [];
  if (messages.length > 0) bodies.push(v.strictObject({ error: v.picklist(messages) }));
  if (withFields.length > 0) bodies.push(v.strictObject({ ...RESPONSE_SCHEMAS.ValidationError.entries, error: v.picklist(withFields) }));
  if (validates) bodies.push(RESPONSE_SCHEMAS.ValidationError);
  const headerNames = [...new Set(failures.flatMap((f) => Object.keys(f.headers ?? {})))];
  const headers = Object.fromEntries(
    headerNames.map((name) => {
      const spec = failures.find((f) => f.headers?.[name])!.headers![name]!;
      const required = failures.every((f) => f.headers?.[name]?.required === true);
      return [name, { description: spec.description, required, schema: inlineSchema(v.string(), NAMED) }];
    }),
  );
  const description = [...messages, ...withFields, ...(validates ? ['a validation error naming each wrong field or parameter'] : [])].join('; ');
  return {
    description,
    ...(headerNames.length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: inlineSchema(bodies.length === 1 ? bodies[0]! : v.union(bodies), NAMED) } },
  };
}

/** The Responses Object of `endpoint`: its success, then each failure status. */
function responsesOf(endpoint: Endpoint): Record<string, unknown> {
  const { ok } = endpoint;
  const headers = Object.fromEntries(
    Object.entries(ok.headers ?? {}).map(([name, description]) => [name, { description, required: true, schema: inlineSchema(v.string(), NAMED) }]),
  );
  const success = {
    description: ok.description,
    ...(ok.headers ? { headers } : {}),
    ...(ok.schema ? { content: { 'application/json': { schema: inlineSchema(ok.schema, NAMED) } } } : {}),
  };
  const byStatus = new Map<number, Failure[]>();
  for (const f of failuresOf(endpoint)) byStatus.set(f.status, [...(byStatus.get(f.status) ?? []), f]);
  const failures = [...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [String(status), failureResponse(list)]);
  return { [String(ok.status)]: success, ...Object.fromEntries(failures) };
}

/**
 * Security Requirement Objects per guard, to read (GET) and to change: alternatives, each naming
 * every scheme it needs. A token's "scopes" are the scope it needs (OpenAPI 3.1 allows roles for
 * schemes other than OAuth).
 */
const SECURITY: Record<Guard, { read: object[]; change: object[] }> = {
  public: { read: [], change: [] },
  session: { read: [{ sessionCookie: [] }], change: [{ sessionCookie: [], csrfToken: [] }] },
  admin: {
    read: [{ sessionCookie: [] }, { apiToken: ['read'] }],
    change: [{ sessionCookie: [], csrfToken: [] }, { apiToken: ['write'] }],
  },
  adminSession: { read: [{ sessionCookie: [] }], change: [{ sessionCookie: [], csrfToken: [] }] },
};

/** `/api/services/:id` as an OpenAPI path template, `/api/services/{id}`. */
export const pathTemplate = (routePath: string): string => routePath.replace(/:([^/]+)/g, '{$1}');

function operationOf(endpoint: Endpoint): OpenApiOperation {
  const parameters = [
    ...Object.entries(endpoint.params ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema: inlineSchema(schema, NAMED) })),
    ...Object.entries(endpoint.headers ?? {}).map(([name, schema]) => ({ name, in: 'header', required: false, schema: inlineSchema(schema, NAMED) })),
    ...Object.entries(endpoint.query ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: schema.type !== 'optional',
      schema: inlineSchema(schema, NAMED),
    })),
  ];
  const security = SECURITY[endpoint.guard][endpoint.method === 'GET' ? 'read' : 'change'];
  return {
    operationId: endpoint.operationId,
    tags: [endpoint.tag],
    summary: endpoint.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(endpoint.body ? { requestBody: { required: true, content: { 'application/json': { schema: inlineSchema(endpoint.body, NAMED) } } } } : {}),
    responses: responsesOf(endpoint),
    security,
  };
}

const DESCRIPTION = `The admin and dashboard JSON API of Gatehouse, an authenticating reverse-proxy gateway.

Served wherever the admin API is: the admin port, which is ADMIN_URL's origin when that is set, and the public origin while ADMIN_URL is unset. Errors are {"error": "<message>"} with the exact messages listed per answer; validation errors add "fields", the reason for each wrong field or parameter. A wrong method on a known path answers 405 Method not allowed with Allow.

Authentication: an administrator's session (cookie from signing in at /auth/login on this origin) with its CSRF token in X-CSRF-Token on POST, PUT, PATCH and DELETE, or an admin API token (Authorization: Bearer ght_…; its scope read: GET only; write: everything but /api/tokens and ending an administrator's sessions; write sessions: that too).`;

/** The paths and component schemas, the same on every origin: converted once per process, when first asked for. */
let converted: { paths: OpenApiDocument['paths']; schemas: Record<string, unknown> } | undefined;

function convertedOnce(): NonNullable<typeof converted> {
  if (converted) return converted;
  const paths: OpenApiDocument['paths'] = {};
  for (const endpoint of ENDPOINTS) {
    const path = (paths[pathTemplate(endpoint.path)] ??= {});
    path[endpoint.method.toLowerCase()] = operationOf(endpoint);
  }
  return (converted = { paths, schemas: componentSchemas(NAMED) });
}

/**
 * The OpenAPI 3.1 description of the admin plane's JSON endpoints ({@link ENDPOINTS}) as served on
 * `origin` (its session cookie's name), their schemas converted from valibot (json-schema.ts).
 */
export function buildOpenApiDocument(origin: ServedOrigin): OpenApiDocument {
  const { paths, schemas } = convertedOnce();
  return {
    openapi: '3.1.1',
    info: { title: 'Gatehouse admin API', version, description: DESCRIPTION },
    paths,
    components: {
      schemas,
      securitySchemes: {
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: origin.cookies.names.session,
          description: "A session made by signing in on this origin; an administrator's for the admin API",
        },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: "The session's CSRF token (GET /auth/csrf-token), with the session cookie on POST, PUT, PATCH and DELETE",
        },
        apiToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'ght_ and 43 base64url characters',
          description: 'An admin API token (made in the console or by POST /api/tokens): read allows GET, write every method, write sessions also ending an administrator\'s sessions; none is taken on /api/tokens',
        },
      },
    },
  };
}
