import type { Service } from '../../shared/types.js';
import type { AuditRecord } from '../audit-log.js';
import { html } from '../../shared/pages/html.js';
import { consolePage, type ConsoleView } from './console-layout.js';
import { auditTable, type AuditNames } from './audit-table.js';
import { formatCount } from './fragments.js';
import { servicesTable } from './services-table.js';
import { trafficPanel } from './panels/traffic-panel.js';

export interface OverviewData {
  counts: { total: number; enabled: number; disabled: number };
  services: Service[];
  /** Each service's ETag, by id (design.md §4.9). */
  etags: Map<string, string>;
  /** Requests in the last hour per service id, and in total under `*`. */
  requestsLastHour: Map<string, number>;
  recentActivity: AuditRecord[];
  /** Who acted in `recentActivity`: users' emails by subject, API tokens' names by actor id. */
  actors: Pick<AuditNames, 'emails' | 'tokens'>;
}

/**
 * `GET /dashboard`: the console's home (design.md §4.6). The interface's counts and recent
 * activity, traffic charts for all services, and the services table; counts, table and activity
 * are live regions that refresh every few seconds, the charts refresh themselves.
 */
export function overviewPage(view: ConsoleView, data: OverviewData): string {
  const { counts, requestsLastHour } = data;
  const names = new Map(data.services.map((service) => [service.id, service.name]));
  const stat = (label: string, value: number, key: string) =>
    html`<div class="stat"><dt>${label}</dt><dd data-stat="${key}">${formatCount(value)}</dd></div>`;
  const body = html`<h1>Overview</h1>
<dl class="stats" data-live="stats" aria-label="Statistics">
  ${stat('Services', counts.total, 'total')}
  ${stat('Enabled', counts.enabled, 'enabled')}
  ${stat('Disabled', counts.disabled, 'disabled')}
  ${stat('Requests, last hour', requestsLastHour.get('*') ?? 0, 'requests')}
</dl>
${trafficPanel()}
<section aria-labelledby="services-heading">
  <div class="section-head"><h2 id="services-heading">Services</h2>
    <a class="button" href="/dashboard/services/new">New service</a></div>
  <div data-live="services">${servicesTable(data.services, data.etags, requestsLastHour, view)}</div>
</section>
<section aria-labelledby="activity-heading">
  <div class="section-head"><h2 id="activity-heading">Recent activity</h2>
    <p class="head-links"><a href="/dashboard/sessions">Who is signed in →</a> <a href="/dashboard/audit">Full audit log →</a></p></div>
  <div data-live="activity">${auditTable(data.recentActivity, { services: names, ...data.actors }, 'Recent activity, newest first')}</div>
</section>`;
  return consolePage(view, { title: 'Overview', section: 'overview', body, charts: true, live: true });
}
