import type { Service } from '../../shared/types.js';
import type { ServiceHealth } from '../registry/service-health.js';
import { html } from '../../shared/pages/html.js';
import { serviceEntryPath } from '../../shared/services/service-entry.js';
import { accessLogSection, type AccessLogSectionOptions } from './panels/access-log-section.js';
import { policyLines } from './access-policy-text.js';
import { ruleLine } from './rule-text.js';
import { consolePage, type ConsoleView } from './console-layout.js';
import { badge, formatCount, timeTag } from './fragments.js';
import { hostLinks, serviceActions } from './services-table.js';
import { explainFromQuery, explainPanel } from './panels/explain-panel.js';
import { targetsPanel } from './panels/targets-panel.js';
import { trafficPanel } from './panels/traffic-panel.js';

/**
 * `GET /dashboard/services/:id`: one service (design.md §4.6): its settings and actions, its
 * targets and their health as the proxy processes report it (`health`), its traffic charts, and
 * its access log with filters, and "Who can reach this?" (design.md §4.18) answering the question in
 * the page's query against `services`, the whole registry.
 */
export function servicePage(view: ConsoleView, data: AccessLogSectionOptions & { etag: string; requestsLastHour: number; health: ServiceHealth; services: readonly Service[] }): string {
  const { service } = data;
  const query = data.url.searchParams;
  const body = html`<p class="breadcrumb"><a href="/dashboard">Overview</a> / Service</p>
<div class="section-head" data-live="heading"><h1>${service.name}</h1>${serviceActions(service, data.etag, { afterDelete: '/dashboard' })}</div>
<div data-live="summary">${summary(service, data.requestsLastHour, view)}</div>
${explainPanel(service, query, explainFromQuery(service, data.services, query))}
${targetsPanel(data.health)}
${trafficPanel(service.id)}
${accessLogSection(data)}`;
  return consolePage(view, { title: service.name, section: 'none', body, charts: true, live: true, scripts: ['log-filters.js'] });
}

/** The service's settings; with hosts, its path is within each of them, linked there (design.md §5). */
function summary(service: Service, requestsLastHour: number, view: ConsoleView) {
  const path = service.hosts?.length
    ? html`<div><dt>Path</dt><dd><code>${service.path}</code> on each host</dd></div>
<div><dt>Hosts</dt><dd class="wrap" data-hosts>${hostLinks(service, view.publicOrigin)}</dd></div>`
    : html`<div><dt>Path</dt><dd><a href="${view.servicesOrigin}${serviceEntryPath(service.path)}"><code>${service.path}</code></a></dd></div>`;
  return html`<dl class="summary">
${path}
<div><dt>Target</dt><dd class="wrap"><code>${service.targetUrl}</code></dd></div>
<div><dt>Sign-in</dt><dd>${service.requireAuth ? 'Required' : 'Open to anyone'}</dd></div>
${service.requireAuth ? html`<div><dt>Who may use it</dt><dd><ul class="policy-lines" data-access-policy>${policyLines(service.access).map((line) => html`<li>${line}</li>`)}</ul></dd></div>` : ''}
${service.rules?.length ? html`<div><dt>Rules</dt><dd><ul class="policy-lines" data-rules>${service.rules.map((rule) => html`<li><code>${ruleLine(rule)}</code></li>`)}</ul></dd></div>` : ''}
${service.corsPreflight === 'public' ? html`<div><dt>CORS preflights</dt><dd>Let through without sign-in</dd></div>` : ''}
<div><dt>Bearer token</dt><dd>${service.forwardAuthorization ? 'Forwarded to the target' : 'Not forwarded'}</dd></div>
<div><dt>State</dt><dd>${badge(service.enabled, 'Enabled', 'Disabled')}</dd></div>
<div><dt>Requests, last hour</dt><dd>${formatCount(requestsLastHour)}</dd></div>
<div><dt>Created</dt><dd>${timeTag(service.createdAt)}</dd></div>
<div><dt>Last change</dt><dd>${timeTag(service.updatedAt)}</dd></div>
${service.description ? html`<div class="wide"><dt>Description</dt><dd>${service.description}</dd></div>` : ''}
</dl>`;
}
