import * as v from 'valibot';
import type { ErrorCode } from '../../shared/errors.js';
import { FILTER_PARAMETER_SCHEMAS } from '../access-log/reading/access-log-filter.js';
import { TRAFFIC_PARAMETERS } from '../access-log/traffic-query.js';
import { PAGE_PARAMETERS } from '../http/pagination.js';
import { READ_ONLY, SERVICE_BODY_SCHEMAS } from '../registry/service-validation.js';
import { TOKEN_BODY_SCHEMAS } from '../credentials/token-validation.js';
import { EXPLAIN_BODY_SCHEMA } from '../explain/explain-input.js';
import { RESPONSE_SCHEMAS as R } from './response-schemas.js';

/**
 * Who may call an endpoint, as routes/route-table.ts guards it; the security requirements and the guard's own
 * answers follow from it (document.ts).
 * - `public`: anyone.
 * - `session`: any session (`requireSession`).
 * - `admin`: an administrator's session, with its CSRF token to change anything, or an admin API
 *   token, `write` to change anything (`requireAdmin`, `requireCsrf`).
 * - `adminSession`: an administrator's session only, never a token (`requireAdminSession`, `requireCsrf`).
 */
export type Guard = 'public' | 'session' | 'admin' | 'adminSession';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One JSON endpoint of the admin plane, as its OpenAPI description gives it. */
export interface Endpoint {
  operationId: string;
  method: HttpMethod;
  /** The route as routes/route-table.ts adds it: `/api/services/:id`. */
  path: string;
  tag: string;
  summary: string;
  guard: Guard;
  /** The schema of each `:name` of the path. */
  params?: Record<string, v.GenericSchema>;
  /** Request header fields it reads (optional ones). */
  headers?: Record<string, v.GenericSchema>;
  /** The query parameters; wrong ones answer 400 with `fields`. */
  query?: Record<string, v.GenericSchema>;
  /** The JSON body; its answers (400, 408, 413, 415) follow. */
  body?: v.GenericSchema;
  /** The answer when it works; 204 has no body. */
  ok: { status: 200 | 201 | 204; description: string; schema?: v.GenericSchema; headers?: Record<string, string> };
  /** What the handler itself may fail with, beyond the guard's and the body's answers. */
  errors?: ErrorCode[];
}

/** Fields a PUT body may carry and the service ignores (design.md §5). */
const ignoredOnUpdate = Object.fromEntries(
  READ_ONLY.map((field) => [field, v.optional(v.pipe(v.unknown(), v.description('Set by the service: ignored')))]),
);

/** The bodies' schemas by the name the document gives them: the validation's own, unknown fields refused. */
export const REQUEST_SCHEMAS = {
  ServiceCreate: v.pipe(
    v.strictObject(SERVICE_BODY_SCHEMAS.create.entries),
    v.description('A new service; without name, path, or both targetUrl and targets (or with null for one): 400 Missing required fields: name, path, targetUrl'),
  ),
  ServiceUpdate: v.pipe(
    v.strictObject({ ...SERVICE_BODY_SCHEMAS.update.entries, ...ignoredOnUpdate }),
    v.description('Any of the writable fields; {} changes nothing'),
  ),
  ServiceToggle: v.strictObject(SERVICE_BODY_SCHEMAS.toggle.entries),
  ApiTokenCreate: v.strictObject(TOKEN_BODY_SCHEMAS.create.entries),
  ServiceExplain: v.pipe(v.strictObject(EXPLAIN_BODY_SCHEMA.entries), v.description('A request to explain: its path, method, caller and host')),
  RegistryDocument: v.pipe(
    v.strictObject({
      version: v.literal(1),
      services: v.array(v.strictObject({ id: v.optional(v.string()), ...SERVICE_BODY_SCHEMAS.create.entries, enabled: v.optional(v.boolean()) })),
    }),
    v.description("A registry document (GET /api/services/export's form): each entry by the create body's rules, plus enabled; an entry's id is ignored"),
  ),
};

const serviceId = v.pipe(v.string(), v.uuid(), v.description("The service's id"));
/** `If-Match` on a service's changes (RFC 9110 §13.1.1, design.md §4.9). */
const ifMatch = {
  'If-Match': v.pipe(v.string(), v.description('ETags from GET /api/services/:id ("<version>"), or *; no longer matching: 412 Precondition failed; malformed: 400')),
};
const tokenId = v.pipe(v.string(), v.uuid(), v.description("The token's id"));
const sessionHandle = v.pipe(v.string(), v.description("The session's id as GET /api/sessions lists it"));

/**
 * One endpoint of {@link ENDPOINTS}: `route` as routes/route-table.ts adds it (`GET /api/services/:id`), its
 * operation id and summary, its answer when it works, and what else it has (params, headers,
 * query, body, errors).
 */
function endpoint(
  route: `${HttpMethod} /${string}`,
  operationId: string,
  summary: string,
  ok: Endpoint['ok'],
  more: Pick<Endpoint, 'params' | 'headers' | 'query' | 'body' | 'errors'> = {},
): Omit<Endpoint, 'tag' | 'guard'> {
  const [method, path] = route.split(' ') as [HttpMethod, string];
  return { operationId, method, path, summary, ok, ...more };
}

/** `endpoints` under one tag of the description, behind one guard. */
function tagged(tag: string, guard: Guard, endpoints: Omit<Endpoint, 'tag' | 'guard'>[]): Endpoint[] {
  return endpoints.map((endpoint) => ({ ...endpoint, tag, guard }));
}

/**
 * Every JSON endpoint of the admin plane (routes/route-table.ts; interface.md §4, design.md §4.7, §4.8), in its
 * order. Each becomes one operation of the description; the test of the description checks that
 * every JSON route is here.
 */
export const ENDPOINTS: Endpoint[] = [
  ...tagged('Session', 'session', [
    endpoint('GET /auth/profile', 'getProfile', 'The signed-in user',
      { status: 200, description: 'The session user', schema: v.strictObject({ user: R.SessionUser }) }),
    endpoint('GET /auth/csrf-token', 'getCsrfToken', "The session's CSRF token, for X-CSRF-Token",
      { status: 200, description: 'The CSRF token', schema: v.strictObject({ csrfToken: v.string() }) }),
  ]),
  ...tagged('Services', 'admin', [
    endpoint('GET /api/services', 'listServices', 'Every service, or those naming a host',
      { status: 200, description: 'Every service (with host, those whose hosts name it), ordered by path', schema: v.array(R.Service) },
      { query: { host: v.optional(v.pipe(v.string(), v.minLength(1), v.description('A host name, normalized as a service\'s hosts are (case, IDNA, a trailing dot); *.example.com lists the services naming that wildcard'))) } }),
    endpoint('POST /api/services', 'createService', 'Registers a service',
      { status: 201, description: 'The new service, enabled', schema: R.Service, headers: { Location: 'The path of the new service' } },
      { body: REQUEST_SCHEMAS.ServiceCreate, errors: ['MISSING_FIELDS', 'PATH_IN_USE'] }),
    endpoint('GET /api/services/export', 'exportServices', 'The whole registry as a document, for a repository of service definitions',
      { status: 200, description: 'The registry document', schema: R.RegistryDocument }),
    endpoint('POST /api/services/apply', 'applyServices', 'Makes the registry what a document says (matched by path and hosts), in one transaction; with dryRun=true only plans it',
      { status: 200, description: 'The plan, as applied (or as it would be)', schema: R.RegistryPlan },
      { query: { dryRun: v.optional(v.pipe(v.picklist(['true', 'false']), v.description('true: plan only, nothing changes'))) }, body: REQUEST_SCHEMAS.RegistryDocument }),
    endpoint('GET /api/services/:id', 'getService', 'One service',
      { status: 200, description: 'The service', schema: R.Service, headers: { ETag: 'The service\'s version, for If-Match' } },
      { params: { id: serviceId }, errors: ['SERVICE_NOT_FOUND'] }),
    endpoint('PUT /api/services/:id', 'updateService', 'Changes a service',
      { status: 200, description: 'The service as changed', schema: R.Service },
      { params: { id: serviceId }, headers: ifMatch, body: REQUEST_SCHEMAS.ServiceUpdate, errors: ['SERVICE_NOT_FOUND', 'PATH_IN_USE', 'PRECONDITION_FAILED'] }),
    endpoint('DELETE /api/services/:id', 'deleteService', 'Removes a service',
      { status: 204, description: 'Removed' },
      { params: { id: serviceId }, headers: ifMatch, errors: ['SERVICE_NOT_FOUND', 'PRECONDITION_FAILED'] }),
    endpoint('PATCH /api/services/:id/toggle', 'toggleService', 'Enables or disables a service (a disabled one answers 503 Service is disabled)',
      { status: 200, description: 'The service as changed', schema: R.Service },
      { params: { id: serviceId }, headers: ifMatch, body: REQUEST_SCHEMAS.ServiceToggle, errors: ['SERVICE_NOT_FOUND', 'PRECONDITION_FAILED'] }),
    endpoint('GET /api/services/:id/logs', 'listServiceAccessLog', "A page of the service's access log, newest first; filters combine with AND, empty ones are ignored",
      { status: 200, description: 'The page', schema: R.AccessLogPage },
      { params: { id: serviceId }, query: { ...PAGE_PARAMETERS, ...FILTER_PARAMETER_SCHEMAS }, errors: ['SERVICE_NOT_FOUND'] }),
    endpoint('GET /api/services/:id/health', 'getServiceHealth', "The service's targets and their health as each proxy process reports it (reports older than a minute left out)",
      { status: 200, description: 'The targets', schema: R.ServiceHealth },
      { params: { id: serviceId }, errors: ['SERVICE_NOT_FOUND'] }),
    endpoint('POST /api/services/:id/explain', 'explainServiceAccess', 'Who can reach this? Which part of the service (a rule, its CORS preflight setting, its own settings) decides a request and why, as the data plane would; read only, not audited',
      { status: 200, description: 'The explanation', schema: R.Explanation },
      { params: { id: serviceId }, body: REQUEST_SCHEMAS.ServiceExplain, errors: ['SERVICE_NOT_FOUND'] }),
  ]),
  ...tagged('Identity assertion', 'admin', [
    endpoint('POST /api/assertion-keys/rotate', 'rotateAssertionKey', 'Signs identity assertions with a new key from now on; the previous key stays published until its assertions expire',
      { status: 200, description: 'The new and the previous key', schema: R.RotatedKey }),
  ]),
  ...tagged('Sessions', 'admin', [
    endpoint('GET /api/sessions', 'listSessions', "Live sessions, newest first: a user's (by subject or verified email) or everyone's",
      { status: 200, description: 'The page', schema: R.SessionPage },
      { query: { user: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(320), v.description('A subject, or a verified email in any case'))), ...PAGE_PARAMETERS } }),
    endpoint('DELETE /api/sessions/:id', 'revokeSession', "Ends a session on every proxy within a second (audited as SESSION_REVOKED); an administrator's only with a session or a token of scope write sessions",
      { status: 204, description: 'Ended' },
      { params: { id: sessionHandle }, errors: ['SESSIONS_SCOPE_REQUIRED', 'SESSION_NOT_FOUND'] }),
    endpoint('DELETE /api/users/:sub/sessions', 'revokeUserSessions', "Signs a user out everywhere: ends every session of the subject (audited as SESSION_REVOKED); an administrator's only with a session or a token of scope write sessions, else none ends",
      { status: 200, description: 'How many sessions ended (0 when the user had none)', schema: R.RevokedSessions },
      { params: { sub: v.pipe(v.string(), v.description('The subject, percent-encoded')) }, errors: ['SESSIONS_SCOPE_REQUIRED'] }),
  ]),
  ...tagged('Certificates', 'admin', [
    endpoint('GET /api/certificates', 'listCertificates', "The certificates the gateway keeps by ACME, by host: PUBLIC_URL's, ADMIN_URL's and every service host but wildcards ([] while ACME_EMAIL is unset)",
      { status: 200, description: 'Every host, by name', schema: v.array(R.Certificate) }),
  ]),
  ...tagged('API tokens', 'adminSession', [
    endpoint('GET /api/tokens', 'listApiTokens', 'The admin API tokens not revoked, expired ones included, newest first',
      { status: 200, description: 'The tokens, never a secret', schema: v.array(R.ApiToken) }),
    endpoint('POST /api/tokens', 'createApiToken', 'Makes an admin API token',
      { status: 201, description: 'The token with its secret, shown this once', schema: R.CreatedApiToken },
      { body: REQUEST_SCHEMAS.ApiTokenCreate }),
    endpoint('DELETE /api/tokens/:id', 'revokeApiToken', 'Revokes an admin API token at once',
      { status: 204, description: 'Revoked' },
      { params: { id: tokenId }, errors: ['TOKEN_NOT_FOUND'] }),
  ]),
  ...tagged('Dashboard', 'admin', [
    endpoint('GET /dashboard/stats', 'getStatistics', 'Counts of services and the recent activity',
      { status: 200, description: 'The statistics', schema: R.Statistics }),
    endpoint('GET /dashboard/logs', 'listAuditLog', 'A page of the audit log, newest first',
      { status: 200, description: 'The page', schema: R.AuditLogPage },
      { query: PAGE_PARAMETERS }),
    endpoint('GET /dashboard/traffic', 'getTraffic', 'Requests by status class and latency over the last hour or day, from the per-minute rollups',
      { status: 200, description: 'The series', schema: R.TrafficSeries },
      { query: TRAFFIC_PARAMETERS, errors: ['SERVICE_NOT_FOUND'] }),
  ]),
  ...tagged('Description', 'public', [
    endpoint('GET /api/openapi.json', 'getOpenApiDocument', 'This description of the admin API (OpenAPI 3.1)',
      { status: 200, description: 'The OpenAPI document', schema: R.OpenApiDocument }),
  ]),
];
