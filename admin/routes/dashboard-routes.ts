import { sendJson } from '../../shared/http-response.js';
import type { AuditLog } from '../audit-log.js';
import { parsePagination } from '../pagination.js';
import type { Handler } from '../request-context.js';
import type { ServiceRegistry } from '../service-registry.js';

/** How many audit entries the statistics object shows as recent activity. */
export const RECENT_ACTIVITY_COUNT = 10;

/** The dashboard endpoints (spec §4.3); the admin guard is wired in routes.ts. */
export interface DashboardHandlers {
  stats: Handler;
  logs: Handler;
}

/** Handlers for `/dashboard/stats` and `/dashboard/logs` (spec §4.3, §2.5). */
export function createDashboardHandlers(deps: { registry: ServiceRegistry; audit: AuditLog }): DashboardHandlers {
  const { registry, audit } = deps;
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
  };
}
