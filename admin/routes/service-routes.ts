import { sendJson } from '../../shared/http-response.js';
import { parseAccessLogQuery } from '../access-log-filter.js';
import type { AccessLogStore } from '../access-log-store.js';
import { actorOf } from '../actor.js';
import { readJsonBody } from '../request-body.js';
import type { Handler } from '../request-context.js';
import type { ServiceRegistry } from '../service-registry.js';

/** The service-management endpoints (interface.md §4.2); admin and CSRF guards are wired in routes.ts. */
export interface ServiceHandlers {
  list: Handler;
  create: Handler;
  get: Handler;
  update: Handler;
  remove: Handler;
  toggle: Handler;
  logs: Handler;
}

/**
 * Handlers for `/api/services…` (interface.md §4.2, design.md §5). Each throws `GatewayError` for its failures
 * (400/404/409/413/415), which the admin plane turns into the JSON error response.
 */
export function createServiceHandlers(deps: { registry: ServiceRegistry; accessLogs: AccessLogStore }): ServiceHandlers {
  const { registry, accessLogs } = deps;
  return {
    /** GET /api/services → 200, every service ordered by path. */
    list: ({ res }) => sendJson(res, 200, registry.list()),

    /** POST /api/services → 201, the new service, with `Location` pointing at it. */
    create: async (ctx) => {
      const service = await registry.create(await readJsonBody(ctx), actorOf(ctx));
      sendJson(ctx.res, 201, service, { location: `/api/services/${service.id}` });
    },

    /** GET /api/services/:id → 200, the service. */
    get: ({ res, params }) => sendJson(res, 200, registry.get(params.id!)),

    /** PUT /api/services/:id → 200, the updated service. */
    update: async (ctx) => {
      const body = await readJsonBody(ctx);
      sendJson(ctx.res, 200, await registry.update(ctx.params.id!, body, actorOf(ctx)));
    },

    /** DELETE /api/services/:id → 204, no body. */
    remove: async (ctx) => {
      await registry.remove(ctx.params.id!, actorOf(ctx));
      ctx.res.writeHead(204, { 'cache-control': 'no-store' }).end();
    },

    /** PATCH /api/services/:id/toggle with `{ "enabled": <boolean> }` → 200, the updated service. */
    toggle: async (ctx) => {
      const body = await readJsonBody(ctx);
      sendJson(ctx.res, 200, await registry.setEnabled(ctx.params.id!, body, actorOf(ctx)));
    },

    /**
     * GET /api/services/:id/logs?limit&offset&status&method&path&user&from&to → 200
     * `{ logs, total }` (plus `partial: true` when method/path filtering hit the scan window),
     * newest first; 400 naming each bad parameter.
     */
    logs: ({ res, params, url }) => {
      const service = registry.get(params.id!);
      const { page, filter } = parseAccessLogQuery(url.searchParams);
      sendJson(res, 200, accessLogs.listForService(service.id, page.limit, page.offset, filter));
    },
  };
}
