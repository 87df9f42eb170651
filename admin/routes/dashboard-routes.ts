import { sendJson } from '../../shared/http/http-response.js';
import type { AuditLog } from '../audit-log.js';
import { parsePagination } from '../http/pagination.js';
import type { Handler } from '../http/request-context.js';
import type { ServiceRegistry } from '../registry/service-registry.js';
import { parseTrafficQuery } from '../access-log/traffic-query.js';
import { ALL_SERVICES, type TrafficRollups } from '../access-log/traffic-rollups.js';

/** How many audit entries the statistics object shows as recent activity. */
export const RECENT_ACTIVITY_COUNT = 10;

/** The dashboard endpoints (interface.md §4.3); the admin guard is wired in route-table.ts. */
export interface DashboardHandlers {
  stats: Handler;
  logs: Handler;
  traffic: Handler;
}

/** Handlers for `/dashboard/stats`, `/dashboard/logs` (interface.md §4.3, §2.5) and `/dashboard/traffic`. */
export function createDashboardHandlers(deps: { registry: ServiceRegistry; audit: AuditLog; rollups: TrafficRollups }): DashboardHandlers {
  const { registry, audit, rollups } = deps;
  return {
    /**
     * GET /dashboard/stats → 200 `{ totalServices, enabledServices, disabledServices, recentActivity }`,
     * recent activity being the newest {@link RECENT_ACTIVITY_COUNT} audit entries, newest first.
     */
    stats: ({ res }) => {
      const { total, enabled, disabled } = registry.counts();
      sendJson(res, 200, {
        totalServices: total,
        enabledServices: enabled,
        disabledServices: disabled,
        recentActivity: audit.recent(RECENT_ACTIVITY_COUNT),
      });
    },

    /** GET /dashboard/logs?limit&offset → 200 `{ logs, total }`, audit records newest first; 400 on bad paging. */
    logs: ({ res, url }) => {
      const { limit, offset } = parsePagination(url.searchParams);
      sendJson(res, 200, audit.list(limit, offset));
    },

    /**
     * GET /dashboard/traffic?range=1h|1d&serviceId=<id> → 200 {@link TrafficSeries}: per minute over
     * the last hour, or per 5 minutes over the last day, for one service or (without `serviceId`)
     * all together; read from the rollups, never the raw log. 400 on a bad parameter, 404 for an
     * unknown service.
     */
    traffic: ({ res, url }) => {
      const { range, serviceId } = parseTrafficQuery(url.searchParams);
      if (serviceId) registry.get(serviceId);
      sendJson(res, 200, rollups.series(serviceId ?? ALL_SERVICES, range));
    },
  };
}
