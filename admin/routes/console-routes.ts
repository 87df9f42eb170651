import { GatewayError } from '../../shared/errors.js';
import { redirect, sendHtml } from '../../shared/http/http-response.js';
import { parseAccessLogQuery } from '../access-log/reading/access-log-filter.js';
import type { AccessLogReads } from '../access-log/reading/access-log-reads.js';
import type { ApiTokens } from '../credentials/api-tokens.js';
import type { AuditLog, AuditRecord } from '../audit-log.js';
import { CONSOLE_LOG_PAGE_SIZE } from '../console/panels/access-log-section.js';
import { auditPage, CONSOLE_AUDIT_PAGE_SIZE } from '../console/audit-page.js';
import type { ConsoleAssets } from '../console/console-assets.js';
import type { ConsoleView } from '../console/console-layout.js';
import { consoleErrorPage } from '../console/error-pages.js';
import { overviewPage } from '../console/overview-page.js';
import { serviceFormPage } from '../console/service-form-page.js';
import { servicePage } from '../console/service-page.js';
import { tokensPage } from '../console/tokens-page.js';
import { parsePagination } from '../http/pagination.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { ServiceRegistry } from '../registry/service-registry.js';
import type { TrafficRollups } from '../access-log/traffic-rollups.js';
import type { TargetHealthReports } from '../registry/service-health.js';

/** A rendered console page and its status (200 unless given). */
export type Rendered = { status?: number; html: string };

/** Renders a console page made elsewhere (its data comes from that module's own dependencies). */
export type ConsolePageRender = (ctx: RequestContext, view: ConsoleView) => Rendered | Promise<Rendered>;

/** How many audit entries the overview shows as recent activity. */
const RECENT_ACTIVITY = 10;
/** "Last hour" in the console: the current minute and the 59 before it. */
const LAST_HOUR_MS = 59 * 60_000;

export interface ConsoleDeps {
  registry: ServiceRegistry;
  audit: AuditLog;
  accessLogs: AccessLogReads;
  rollups: TrafficRollups;
  tokens: ApiTokens;
  /** What the proxy processes report of the targets, for a service's page. */
  targetHealth: TargetHealthReports;
  assets: ConsoleAssets;
  /** TRACE_UI_URL: where a traced access-log record links to its trace (`{traceId}` filled in); undefined: no links. */
  traceUiUrl?: string | undefined;
}

/** The console's pages (design.md §4.6); the admin-page guard is wired in route-table.ts. */
export interface ConsoleHandlers {
  overview: Handler;
  newService: Handler;
  service: Handler;
  editService: Handler;
  audit: Handler;
  tokens: Handler;
  /**
   * A console page rendered by another module (the Sessions page: routes/session-page-routes.ts),
   * with this console's view and error pages.
   */
  page(render: ConsolePageRender): Handler;
  /** `/dashboard/` → `/dashboard`. */
  slash: Handler;
  /** `/dashboard/assets/:file`, public (no session needed). */
  asset: Handler;
}

/** Handlers of the console's server-rendered pages and assets. */
export function createConsoleHandlers(deps: ConsoleDeps): ConsoleHandlers {
  const { registry, assets } = deps;
  const page = (render: ConsolePageRender): Handler => pageHandler(render, assets);
  return {
    overview: page((_ctx, view) => renderOverview(deps, view)),
    newService: page((_ctx, view) => ({ html: serviceFormPage(view) })),
    editService: page((ctx, view) => ({ html: serviceFormPage(view, registry.getTagged(ctx.params.id!)) })),
    service: page((ctx, view) => renderService(deps, ctx, view)),
    audit: page((ctx, view) => renderAudit(deps, ctx, view)),
    tokens: page((_ctx, view) => renderTokens(deps, view)),
    page,
    slash: (ctx) => redirect(ctx.res, '/dashboard'),
    asset: assets.handler,
  };
}

/** The console's view of the request: its signed-in user, CSRF token, assets and services origin. */
function viewOf(ctx: RequestContext, assets: ConsoleAssets): ConsoleView {
  const { servicesOrigin, url } = ctx.origin;
  return { user: ctx.session!.user, csrfToken: ctx.session!.csrfToken, assets, servicesOrigin, publicOrigin: servicesOrigin || url.origin };
}

/** Renders a page; a GatewayError (unknown service, bad paging) becomes a console error page with its status. */
function pageHandler(render: ConsolePageRender, assets: ConsoleAssets): Handler {
  return async (ctx) => {
    let rendered;
    try {
      rendered = await render(ctx, viewOf(ctx, assets));
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const title = error.code === 'SERVICE_NOT_FOUND' ? 'Service not found' : 'Cannot show this page';
      const message = error.code === 'SERVICE_NOT_FOUND' ? 'No service has this id; it may have been deleted.' : error.message;
      sendHtml(ctx.res, error.status, consoleErrorPage(viewOf(ctx, assets), title, message));
      return;
    }
    sendHtml(ctx.res, rendered.status ?? 200, rendered.html);
  };
}

/** `GET /dashboard`: the counts, every service, last hour's requests and the recent activity. */
function renderOverview(deps: ConsoleDeps, view: ConsoleView): Rendered {
  const { registry, audit } = deps;
  const recentActivity = audit.list(RECENT_ACTIVITY, 0).logs;
  return {
    html: overviewPage(view, {
      counts: registry.counts(),
      services: registry.list(),
      etags: registry.etags(),
      requestsLastHour: requestsLastHour(deps.rollups),
      recentActivity,
      actors: actorNames(deps, recentActivity),
    }),
  };
}

/**
 * `GET /dashboard/services/:id`: the service, its targets' health and a page of its access log.
 * A bad log filter still shows the page, with the API's message and status (400).
 */
async function renderService(deps: ConsoleDeps, ctx: RequestContext, view: ConsoleView): Promise<Rendered> {
  const { service, etag } = deps.registry.getTagged(ctx.params.id!);
  const { limit, offset } = parsePagination(ctx.url.searchParams, CONSOLE_LOG_PAGE_SIZE);
  let result;
  let status = 200;
  try {
    const { filter } = parseAccessLogQuery(ctx.url.searchParams, CONSOLE_LOG_PAGE_SIZE);
    result = await deps.accessLogs.listForService(service.id, limit, offset, filter);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    result = { error: error.message };
    status = error.status;
  }
  const requests = requestsLastHour(deps.rollups).get(service.id) ?? 0;
  const health = deps.targetHealth.of(service);
  return { status, html: servicePage(view, { service, etag, url: ctx.url, limit, offset, result, requestsLastHour: requests, health, services: deps.registry.snapshot(), servicesOrigin: ctx.origin.servicesOrigin, traceUiUrl: deps.traceUiUrl }) };
}

/** `GET /dashboard/audit`: a page of the audit log, with who acted and on which service. */
function renderAudit(deps: ConsoleDeps, ctx: RequestContext, view: ConsoleView): Rendered {
  const { limit, offset } = parsePagination(ctx.url.searchParams, CONSOLE_AUDIT_PAGE_SIZE);
  const { logs, total } = deps.audit.list(limit, offset);
  const names = { services: serviceNames(deps.registry), ...actorNames(deps, logs) };
  return { html: auditPage(view, { logs, total, limit, offset, url: ctx.url, names }) };
}

/** `GET /dashboard/tokens`: the API tokens not revoked, with who created each. */
function renderTokens(deps: ConsoleDeps, view: ConsoleView): Rendered {
  const list = deps.tokens.list();
  const emails = deps.audit.loginEmails(list.map((token) => token.createdBy));
  return { html: tokensPage(view, { tokens: list, emails, now: Date.now() }) };
}

/** Each service's requests in the last hour, by id. */
function requestsLastHour(rollups: TrafficRollups): Map<string, number> {
  return rollups.requestsSince(Date.now() - LAST_HOUR_MS);
}

/** Each service's current name, by id. */
function serviceNames(registry: ServiceRegistry): Map<string, string> {
  return new Map(registry.list().map((service) => [service.id, service.name]));
}

/** Who acted in `records`: users by the email of their latest sign-in, API tokens by name. */
function actorNames(deps: ConsoleDeps, records: AuditRecord[]) {
  const userIds = records.map((record) => record.user_id);
  return { emails: deps.audit.loginEmails(userIds), tokens: deps.tokens.actorNames(userIds) };
}
