import { GatewayError } from '../../shared/errors.js';
import { sendJson } from '../../shared/http/http-response.js';
import { parseAccessLogQuery } from '../access-log/reading/access-log-filter.js';
import type { AccessLogReads } from '../access-log/reading/access-log-reads.js';
import { readHostName } from '../../shared/services/host-names.js';
import { actorOf } from '../actor.js';
import { createExplainHandler } from './explain-route.js';
import { rejectWrongParameters } from '../http/query-errors.js';
import { parseIfMatch } from '../http/preconditions.js';
import { MAX_REGISTRY_DOCUMENT_BYTES, readJsonBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { ServiceRegistry } from '../registry/service-registry.js';
import type { TargetHealthReports } from '../registry/service-health.js';

/** The service-management endpoints (interface.md §4.2); admin and CSRF guards are wired in route-table.ts. */
export interface ServiceHandlers {
  list: Handler;
  create: Handler;
  get: Handler;
  update: Handler;
  remove: Handler;
  toggle: Handler;
  logs: Handler;
  health: Handler;
  export: Handler;
  apply: Handler;
  /** `POST /api/services/:id/explain` (explain-route.ts). */
  explain: Handler;
}

/** What the service endpoints work with. */
interface ServiceDeps {
  registry: ServiceRegistry;
  accessLogs: AccessLogReads;
  targetHealth: TargetHealthReports;
}

/**
 * Handlers for `/api/services…` (interface.md §4.2, design.md §5, §4.9). Each throws `GatewayError` for its
 * failures (400/404/409/412/413/415), which the admin plane turns into the JSON error response.
 * `GET /api/services/:id` answers the service's ETag; `PUT`, `PATCH …/toggle` and `DELETE` honour
 * `If-Match` (412 when it no longer holds; without it they write unconditionally).
 */
export function createServiceHandlers(deps: ServiceDeps): ServiceHandlers {
  return { ...serviceCrud(deps.registry), ...registryDocument(deps.registry), ...serviceObservations(deps), explain: createExplainHandler(deps.registry) };
}

/** Listing, reading and writing single services. */
function serviceCrud(registry: ServiceRegistry): Pick<ServiceHandlers, 'list' | 'create' | 'get' | 'update' | 'remove' | 'toggle'> {
  return {
    /**
     * GET /api/services[?host=<name>] → 200, every service ordered by path; with `host`, those
     * whose `hosts` name it (normalized as a service's hosts are); 400 naming a bad `host`.
     */
    list: ({ res, url }) => {
      const host = hostOf(url.searchParams);
      sendJson(res, 200, host === undefined ? registry.list() : registry.listNaming(host));
    },

    /** POST /api/services → 201, the new service, with `Location` pointing at it. */
    create: async (ctx) => {
      const service = await registry.create(await readJsonBody(ctx), actorOf(ctx));
      sendJson(ctx.res, 201, service, { location: `/api/services/${service.id}` });
    },

    /** GET /api/services/:id → 200, the service, with its `ETag`. */
    get: ({ res, params }) => {
      const { service, etag } = registry.getTagged(params.id!);
      sendJson(res, 200, service, { etag });
    },

    /**
     * PUT /api/services/:id → 200, the updated service; no `ETag`, as the stored service is not
     * the body sent (RFC 9110 §9.3.4): GET it again for the next conditional write.
     */
    update: async (ctx) => {
      const ifMatch = ifMatchOf(ctx);
      const body = await readJsonBody(ctx);
      sendJson(ctx.res, 200, await registry.update(ctx.params.id!, body, actorOf(ctx), ifMatch));
    },

    /** DELETE /api/services/:id → 204, no body. */
    remove: async (ctx) => {
      await registry.remove(ctx.params.id!, actorOf(ctx), ifMatchOf(ctx));
      ctx.res.writeHead(204, { 'cache-control': 'no-store' }).end();
    },

    /** PATCH /api/services/:id/toggle with `{ "enabled": <boolean> }` → 200, the updated service. */
    toggle: async (ctx) => {
      const ifMatch = ifMatchOf(ctx);
      const body = await readJsonBody(ctx);
      sendJson(ctx.res, 200, await registry.setEnabled(ctx.params.id!, body, actorOf(ctx), ifMatch));
    },
  };
}

/** The whole registry as one document, out and in (design.md §4.9). */
function registryDocument(registry: ServiceRegistry): Pick<ServiceHandlers, 'export' | 'apply'> {
  return {
    /** GET /api/services/export → 200, the whole registry as a document (design.md §4.9). */
    export: ({ res }) => sendJson(res, 200, registry.exportDocument()),

    /**
     * POST /api/services/apply[?dryRun=true] with a registry document (up to 8 MiB) → 200, the
     * plan (design.md §4.9): applied in one transaction, or with `dryRun=true` only made.
     */
    apply: async (ctx) => {
      const dryRun = dryRunOf(ctx.url.searchParams);
      const body = await readJsonBody(ctx, MAX_REGISTRY_DOCUMENT_BYTES);
      sendJson(ctx.res, 200, { dryRun, ...(await registry.apply(body, actorOf(ctx), { dryRun })) });
    },
  };
}

/** What is seen of a service at work: its access log and its targets' health. */
function serviceObservations({ registry, accessLogs, targetHealth }: ServiceDeps): Pick<ServiceHandlers, 'logs' | 'health'> {
  return {
    /**
     * GET /api/services/:id/logs?limit&offset&status&method&path&user&from&to → 200
     * `{ logs, total }` (plus `partial: true` when method/path/user filtering hit the scan window),
     * newest first; 400 naming each bad parameter.
     */
    logs: async ({ res, params, url }) => {
      const service = registry.get(params.id!);
      const { page, filter } = parseAccessLogQuery(url.searchParams);
      sendJson(res, 200, await accessLogs.listForService(service.id, page.limit, page.offset, filter));
    },

    /**
     * GET /api/services/:id/health → 200 `{ targets: [{ url, weight, state, proxies: [{ proxy,
     * state, since, lastError }] }] }`: the service's targets as the proxy processes report them
     * (registry/service-health.ts), times in ISO 8601 UTC.
     */
    health: ({ res, params }) => sendJson(res, 200, targetHealth.of(registry.get(params.id!))),
  };
}

/** The request's `If-Match` (design.md §4.9); 400 when it is malformed. */
const ifMatchOf = (ctx: RequestContext) => parseIfMatch(ctx.req.headers['if-match']);

/**
 * The `host` filter of `GET /api/services` in its normal form (shared/services/host-names.ts; a
 * wildcard such as `*.apps.example.com` names the services listing that wildcard), or undefined
 * when absent.
 * @throws {GatewayError} BAD_REQUEST (400) with `fields.host` when it is no host name a service could list.
 */
function hostOf(query: URLSearchParams): string | undefined {
  const value = query.get('host');
  if (value === null) return undefined;
  const reading = readHostName(value, { wildcard: true });
  rejectWrongParameters(reading.problem === undefined ? {} : { host: `${reading.problem} (got ${JSON.stringify(value)})` });
  return reading.name;
}

/**
 * `dryRun` of `POST /api/services/apply`: `true`, or `false` (the default).
 * @throws {GatewayError} BAD_REQUEST (400) with `fields.dryRun` for any other value.
 */
function dryRunOf(query: URLSearchParams): boolean {
  const value = query.get('dryRun') ?? 'false';
  if (value !== 'true' && value !== 'false') {
    throw new GatewayError('BAD_REQUEST', { message: 'dryRun must be true or false', fields: { dryRun: 'must be true or false' } });
  }
  return value === 'true';
}
