import type { Service } from '../../../shared/types.js';
import { FILTER_PARAMETERS } from '../../access-log/reading/access-log-filter.js';
import { RESIDUAL_SCAN_LIMIT, type AccessLogPage, type AccessLogRecord } from '../../access-log/reading/access-log-page.js';
import { html, type Html } from '../../../shared/pages/html.js';
import { isWildcardHost } from '../../../shared/services/host-names.js';
import { serviceEntryPath } from '../../../shared/services/service-entry.js';
import { emptyState, errorNotice, formatCount, pager, timeTag } from '../fragments.js';

/** Rows per page of the console's access log (`limit` in the page's query changes it). */
export const CONSOLE_LOG_PAGE_SIZE = 50;

const STATUS_OPTIONS = [
  ['', 'Any status'],
  ['2xx', '2xx success'],
  ['3xx', '3xx redirect'],
  ['4xx', '4xx client error'],
  ['5xx', '5xx server error'],
] as const;
/** The methods the console's forms offer (any other may be typed). */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export interface AccessLogSectionOptions {
  service: Service;
  /** The page URL; its query holds the filters (the API's parameter names) and `offset`. */
  url: URL;
  limit: number;
  offset: number;
  /** The page of records, or the reason the filters were rejected. */
  result: AccessLogPage | { error: string };
  /** Where the proxied services are: `''` (this origin) or PUBLIC_URL's origin (ADMIN_URL set). */
  servicesOrigin: string;
  /** TRACE_UI_URL: a trace viewer's URL with `{traceId}`, where a traced record links; undefined: no links. */
  traceUiUrl?: string | undefined;
}

/**
 * A service's access log (design.md §4.6): a filter form (GET, so a filtered view is a link), the
 * records newest first and a pager. The records sit in a live region that refreshes on the first
 * page, so new requests appear without a reload.
 */
export function accessLogSection(options: AccessLogSectionOptions): Html {
  const { service, url, result } = options;
  const query = url.searchParams;
  const value = (name: string) => query.get(name) ?? '';
  const filtered = FILTER_PARAMETERS.some((name) => value(name) !== '');
  const action = `/dashboard/services/${service.id}`;
  return html`<section class="access-log" id="access-log" aria-labelledby="log-heading">
<h2 id="log-heading">Access log</h2>
<form class="filters" method="get" action="${action}#access-log" data-log-filters>
  <div class="field"><label for="f-status">Status</label>
    <select id="f-status" name="status">${STATUS_OPTIONS.map(
      ([option, label]) => html`<option value="${option}"${value('status').toLowerCase() === option ? ' selected' : ''}>${label}</option>`,
    )}</select></div>
  <div class="field"><label for="f-method">Method</label>
    <input id="f-method" name="method" list="methods" value="${value('method')}" autocomplete="off" size="8" placeholder="any">
    <datalist id="methods">${METHODS.map((m) => html`<option value="${m}">`)}</datalist></div>
  <div class="field"><label for="f-path">Path contains</label>
    <input id="f-path" name="path" value="${value('path')}" placeholder="/orders"></div>
  ${hostFilter(service, value('host'))}
  <div class="field"><label for="f-user">User (subject)</label>
    <input id="f-user" name="user" value="${value('user')}" autocomplete="off"></div>
  <div class="field"><label for="f-request-id">Request id</label>
    <input id="f-request-id" name="requestId" value="${value('requestId')}" autocomplete="off" spellcheck="false" size="16"></div>
  <div class="field"><label for="f-from">From</label>
    <input id="f-from" type="datetime-local" data-iso-field="from">
    <input type="hidden" name="from" value="${value('from')}"></div>
  <div class="field"><label for="f-to">Until</label>
    <input id="f-to" type="datetime-local" data-iso-field="to">
    <input type="hidden" name="to" value="${value('to')}"></div>
  <div class="field buttons"><button type="submit" class="button">Apply filters</button>
    ${filtered ? html`<a class="button secondary" href="${action}#access-log">Clear filters</a>` : ''}</div>
</form>
<div class="log-records"${options.offset === 0 ? html` data-live="access-log"` : ''}>${'error' in result ? errorNotice(result.error) : records(options, result, filtered)}</div>
</section>`;
}

/**
 * The host filter, for a service on hosts (or a link that filters by one): its exact names offered,
 * any name the client used under a wildcard typed.
 */
function hostFilter(service: Service, current: string): Html | '' {
  if (!service.hosts?.length && current === '') return '';
  const names = (service.hosts ?? []).filter((host) => !isWildcardHost(host));
  return html`<div class="field"><label for="f-host">Host</label>
    <input id="f-host" name="host" list="log-hosts" value="${current}" autocomplete="off" placeholder="any">
    <datalist id="log-hosts">${names.map((host) => html`<option value="${host}">`)}</datalist></div>`;
}

function records(options: AccessLogSectionOptions, page: AccessLogPage, filtered: boolean): Html {
  const { service, url, limit, offset } = options;
  if (page.logs.length === 0) {
    if (filtered) return emptyState('No requests match these filters. Widen the time range or clear a filter.');
    if (page.total > 0) return emptyState('This page is past the last record.', html`<a href="/dashboard/services/${service.id}">Back to the newest</a>`);
    return emptyState(
      html`No requests yet. Open <a href="${options.servicesOrigin}${serviceEntryPath(service.path)}"><code>${service.path}</code></a> through the gateway; each request shows up here within a few seconds.`,
    );
  }
  const partial = page.partial
    ? html`<p class="notice">The method, path, host, user and request id filters searched the newest ${formatCount(RESIDUAL_SCAN_LIMIT)} records that match the other filters, so the count is a lower bound. Narrow the time range to search further back.</p>`
    : '';
  return html`${partial}<div class="table-wrap"><table class="responsive log-table">
<caption class="visually-hidden">Access log of ${service.name}, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th>
<th scope="col" class="num">Duration</th><th scope="col">User</th><th scope="col">Client IP</th><th scope="col">Request</th></tr></thead>
<tbody>${page.logs.map((log) => row(log, options.traceUiUrl))}</tbody>
</table></div>
${pager({ url, total: page.total, offset, shown: page.logs.length, limit, label: 'Access log pages' })}`;
}

function row(log: AccessLogRecord, traceUiUrl: string | undefined): Html {
  const statusClass = `s${Math.floor(log.status_code / 100)}xx`;
  return html`<tr>
<td data-label="Time">${timeTag(log.timestamp)}</td>
<td data-label="Method"><code>${log.method}</code>${log.protocol === 'h2' ? html` <span class="muted" title="Over HTTP/2">h2</span>` : ''}</td>
<td data-label="Path" class="wrap">${pathCell(log)}</td>
<td data-label="Status"><span class="status ${statusClass}">${log.status_code}</span>${log.count > 1 ? html` <span class="count" title="${formatCount(log.count)} requests from this address within the minute, stored as one record">×${formatCount(log.count)}</span>` : ''}</td>
<td data-label="Duration" class="num">${formatCount(log.response_time_ms)} ms</td>
<td data-label="User">${log.user_id ? html`<code>${log.user_id}</code>` : html`<span class="muted">anonymous</span>`}</td>
<td data-label="Client IP">${log.ip_address}</td>
<td data-label="Request">${requestCell(log, traceUiUrl)}</td>
</tr>`;
}

/**
 * A record's request id (design.md §3.10), cut to its first characters on one line like a long
 * path, the whole of it on hover and when opened (so it can be copied to quote or to filter by);
 * a traced record's link to its trace when TRACE_UI_URL names a viewer.
 */
function requestCell(log: AccessLogRecord, traceUiUrl: string | undefined): Html {
  if (log.request_id === null) return html`<span class="muted" title="Stored before request ids">none</span>`;
  const id = html`<details class="request-id"><summary title="${log.request_id}"><code>${log.request_id}</code></summary></details>`;
  if (traceUiUrl === undefined || log.trace_id === null) return id;
  return html`${id}<a class="trace-link" href="${traceUiUrl.replaceAll('{traceId}', log.trace_id)}" target="_blank" rel="noopener noreferrer" title="Open trace ${log.trace_id}">trace</a>`;
}

/** Paths longer than this many characters show on one line, cut by the browser, until opened. */
const LONG_PATH = 80;

/**
 * A record's path, after the service host it was requested on when it was routed by one: a long
 * path on one line with an ellipsis, the whole of it on demand (a `<details>`, no script); one the
 * gateway cut when storing it says so.
 */
function pathCell(log: AccessLogRecord): Html {
  const host = log.host === null ? '' : html`<code class="muted" title="The service host the request was routed by">${log.host}</code>`;
  const cut = log.path_truncated
    ? html` <span class="muted" title="The gateway stores the first 2,048 bytes of a request-target">(cut when stored)</span>`
    : '';
  if (log.path.length <= LONG_PATH) return html`${host}<code>${log.path}</code>${cut}`;
  return html`${host}<details class="long-path"><summary title="Show the whole path"><code>${log.path}</code></summary></details>${cut}`;
}
