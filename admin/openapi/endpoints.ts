import * as v from 'valibot';
import type { ErrorCode } from '../../shared/errors.js';
import { FILTER_PARAMETER_SCHEMAS } from '../access-log-filter.js';
import { PAGE_PARAMETERS } from '../pagination.js';
import { TRAFFIC_PARAMETERS } from '../routes/dashboard-routes.js';
import { READ_ONLY, SERVICE_BODY_SCHEMAS } from '../service-validation.js';
import { TOKEN_BODY_SCHEMAS } from '../token-validation.js';
import { RESPONSE_SCHEMAS as R } from './response-schemas.js';

/**
 * Who may call an endpoint, as routes.ts guards it; the security requirements and the guard's own
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
  /** The route as routes.ts adds it: `/api/services/:id`. */
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
    v.description('A new service; without name, path or targetUrl (or with null for one): 400 Missing required fields: name, path, targetUrl'),
  ),
  ServiceUpdate: v.pipe(
    v.strictObject({ ...SERVICE_BODY_SCHEMAS.update.entries, ...ignoredOnUpdate }),
    v.description('Any of the writable fields; {} changes nothing'),
  ),
  ServiceToggle: v.strictObject(SERVICE_BODY_SCHEMAS.toggle.entries),
  ApiTokenCreate: v.strictObject(TOKEN_BODY_SCHEMAS.create.entries),
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

/** `endpoints` under one tag of the description, behind one guard. */
function tagged(tag: string, guard: Guard, endpoints: Omit<Endpoint, 'tag' | 'guard'>[]): Endpoint[] {
  return endpoints.map((endpoint) => ({ ...endpoint, tag, guard }));
}

/**
 * Every JSON endpoint of the admin plane (routes.ts; interface.md §4, design.md §4.7, §4.8), in its
 * order. Each becomes one operation of the description; the test of the description checks that
 * every JSON route is here.
 */
export const ENDPOINTS: Endpoint[] = [
  ...tagged('Session', 'session', [
    {
      operationId: 'getProfile', method: 'GET', path: '/auth/profile',
      summary: 'The signed-in user',
      ok: { status: 200, description: 'The session user', schema: v.strictObject({ user: R.SessionUser }) },
    },
    {
      operationId: 'getCsrfToken', method: 'GET', path: '/auth/csrf-token',
      summary: "The session's CSRF token, for X-CSRF-Token",
      ok: { status: 200, description: 'The CSRF token', schema: v.strictObject({ csrfToken: v.string() }) },
    },
  ]),
  ...tagged('Services', 'admin', [
    {
      operationId: 'listServices', method: 'GET', path: '/api/services',
      summary: 'Every service',
      ok: { status: 200, description: 'Every service, ordered by path', schema: v.array(R.Service) },
    },
    {
      operationId: 'createService', method: 'POST', path: '/api/services',
      summary: 'Registers a service',
      body: REQUEST_SCHEMAS.ServiceCreate,
      ok: { status: 201, description: 'The new service, enabled', schema: R.Service, headers: { Location: 'The path of the new service' } },
      errors: ['MISSING_FIELDS', 'PATH_IN_USE'],
    },
    {
      operationId: 'exportServices', method: 'GET', path: '/api/services/export',
      summary: 'The whole registry as a document, for a repository of service definitions',
      ok: { status: 200, description: 'The registry document', schema: R.RegistryDocument },
    },
    {
      operationId: 'applyServices', method: 'POST', path: '/api/services/apply',
      summary: 'Makes the registry what a document says (matched by path), in one transaction; with dryRun=true only plans it',
      query: { dryRun: v.optional(v.pipe(v.picklist(['true', 'false']), v.description('true: plan only, nothing changes'))) },
      body: REQUEST_SCHEMAS.RegistryDocument,
      ok: { status: 200, description: 'The plan, as applied (or as it would be)', schema: R.RegistryPlan },
    },
    {
      operationId: 'getService', method: 'GET', path: '/api/services/:id',
      summary: 'One service',
      params: { id: serviceId },
      ok: { status: 200, description: 'The service', schema: R.Service, headers: { ETag: 'The service\'s version, for If-Match' } },
      errors: ['SERVICE_NOT_FOUND'],
    },
    {
      operationId: 'updateService', method: 'PUT', path: '/api/services/:id',
      summary: 'Changes a service',
      params: { id: serviceId },
      headers: ifMatch,
      body: REQUEST_SCHEMAS.ServiceUpdate,
      ok: { status: 200, description: 'The service as changed', schema: R.Service },
      errors: ['SERVICE_NOT_FOUND', 'PATH_IN_USE', 'PRECONDITION_FAILED'],
    },
    {
      operationId: 'deleteService', method: 'DELETE', path: '/api/services/:id',
      summary: 'Removes a service',
      params: { id: serviceId },
      headers: ifMatch,
      ok: { status: 204, description: 'Removed' },
      errors: ['SERVICE_NOT_FOUND', 'PRECONDITION_FAILED'],
    },
    {
      operationId: 'toggleService', method: 'PATCH', path: '/api/services/:id/toggle',
      summary: 'Enables or disables a service (a disabled one answers 503 Service is disabled)',
      params: { id: serviceId },
      headers: ifMatch,
      body: REQUEST_SCHEMAS.ServiceToggle,
      ok: { status: 200, description: 'The service as changed', schema: R.Service },
      errors: ['SERVICE_NOT_FOUND', 'PRECONDITION_FAILED'],
    },
    {
      operationId: 'listServiceAccessLog', method: 'GET', path: '/api/services/:id/logs',
      summary: "A page of the service's access log, newest first; filters combine with AND, empty ones are ignored",
      params: { id: serviceId },
      query: { ...PAGE_PARAMETERS, ...FILTER_PARAMETER_SCHEMAS },
      ok: { status: 200, description: 'The page', schema: R.AccessLogPage },
      errors: ['SERVICE_NOT_FOUND'],
    },
  ]),
  ...tagged('Identity assertion', 'admin', [
    {
      operationId: 'rotateAssertionKey', method: 'POST', path: '/api/assertion-keys/rotate',
      summary: 'Signs identity assertions with a new key from now on; the previous key stays published until its assertions expire',
      ok: { status: 200, description: 'The new and the previous key', schema: R.RotatedKey },
    },
  ]),
  ...tagged('API tokens', 'adminSession', [
    {
      operationId: 'listApiTokens', method: 'GET', path: '/api/tokens',
      summary: 'The admin API tokens not revoked, expired ones included, newest first',
      ok: { status: 200, description: 'The tokens, never a secret', schema: v.array(R.ApiToken) },
    },
    {
      operationId: 'createApiToken', method: 'POST', path: '/api/tokens',
      summary: 'Makes an admin API token',
      body: REQUEST_SCHEMAS.ApiTokenCreate,
      ok: { status: 201, description: 'The token with its secret, shown this once', schema: R.CreatedApiToken },
    },
    {
      operationId: 'revokeApiToken', method: 'DELETE', path: '/api/tokens/:id',
      summary: 'Revokes an admin API token at once',
      params: { id: tokenId },
      ok: { status: 204, description: 'Revoked' },
      errors: ['TOKEN_NOT_FOUND'],
    },
  ]),
  ...tagged('Dashboard', 'admin', [
    {
      operationId: 'getStatistics', method: 'GET', path: '/dashboard/stats',
      summary: 'Counts of services and the recent activity',
      ok: { status: 200, description: 'The statistics', schema: R.Statistics },
    },
    {
      operationId: 'listAuditLog', method: 'GET', path: '/dashboard/logs',
      summary: 'A page of the audit log, newest first',
      query: PAGE_PARAMETERS,
      ok: { status: 200, description: 'The page', schema: R.AuditLogPage },
    },
    {
      operationId: 'getTraffic', method: 'GET', path: '/dashboard/traffic',
      summary: 'Requests by status class and latency over the last hour or day, from the per-minute rollups',
      query: TRAFFIC_PARAMETERS,
      ok: { status: 200, description: 'The series', schema: R.TrafficSeries },
      errors: ['SERVICE_NOT_FOUND'],
    },
  ]),
  ...tagged('Description', 'public', [
    {
      operationId: 'getOpenApiDocument', method: 'GET', path: '/api/openapi.json',
      summary: 'This description of the admin API (OpenAPI 3.1)',
      ok: { status: 200, description: 'The OpenAPI document', schema: R.OpenApiDocument },
    },
  ]),
];
