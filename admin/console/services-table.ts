import type { Service } from '../../shared/types.js';
import { html, type Html } from '../../shared/pages/html.js';
import { isWildcardHost, serviceHostOrigin } from '../../shared/services/host-names.js';
import { serviceEntryPath } from '../../shared/services/service-entry.js';
import type { ConsoleView } from './console-layout.js';
import { poolSettingsOf } from '../../shared/services/target-pool-settings.js';
import { badge, emptyState, formatCount, timeTag } from './fragments.js';
import { loadBalancingText } from './pool-settings-text.js';

/**
 * A service's buttons: enable/disable in one click, edit, delete (after a confirmation that names
 * it). service-actions.js handles the clicks through the JSON API, sending `etag` (the service's
 * ETag when the page was made) as If-Match; on 412 service-conflicts.js compares the service as
 * shown (`data-service`, the API's JSON) with the current one (design.md §4.9). `afterDelete` is
 * where the browser goes once the service is gone (default: stay and refresh).
 */
export function serviceActions(service: Service, etag: string, options: { edit?: boolean; afterDelete?: string } = {}): Html {
  const toggleLabel = service.enabled ? 'Disable' : 'Enable';
  return html`<div class="actions" data-etag="${etag}" data-service="${JSON.stringify(service)}">
<button type="button" class="button small secondary" data-action="toggle" data-id="${service.id}" data-enabled="${String(!service.enabled)}"
  data-name="${service.name}" data-focus-key="toggle-${service.id}" aria-label="${toggleLabel} ${service.name}">${toggleLabel}</button>
${options.edit === false ? '' : html`<a class="button small secondary" href="/dashboard/services/${service.id}/edit" aria-label="Edit ${service.name}">Edit</a>`}
<button type="button" class="button small danger" data-action="delete" data-id="${service.id}" data-name="${service.name}" data-path="${service.path}"
  ${options.afterDelete ? html`data-after-delete="${options.afterDelete}"` : ''} data-focus-key="delete-${service.id}" aria-label="Delete ${service.name}">Delete</button>
</div>`;
}

/**
 * A service's targets in the table: each url on a line, its weight unless 1, and for several the
 * balancing (design.md §4.13).
 */
function targetsCell(service: Service): Html {
  const { targets, loadBalancing } = poolSettingsOf(service);
  const lines = targets.map(({ url, weight }) => html`<code>${url}</code>${weight === 1 ? '' : html` <span class="muted">(weight ${weight})</span>`}`);
  return html`${lines.map((line, i) => (i === 0 ? line : html`<br>${line}`))}${targets.length > 1 ? html`<br><span class="muted">${loadBalancingText(loadBalancing)}</span>` : ''}`;
}

/**
 * A service's hosts (design.md §5), each on a line as `<host><path>`: a link to it with PUBLIC_URL's
 * scheme and port (`https://app.example.com:8443/`), but a wildcard's, which names no one host.
 */
export function hostLinks(service: Service, publicOrigin: string): Html {
  const publicUrl = new URL(publicOrigin);
  const entry = serviceEntryPath(service.path);
  const lines = (service.hosts ?? []).map((host) =>
    isWildcardHost(host)
      ? html`<code>${host}${entry}</code>`
      : html`<a href="${serviceHostOrigin(publicUrl, host)}${entry}" title="Open ${host}${entry} through the gateway"><code>${host}${entry}</code></a>`,
  );
  return html`${lines.map((line, i) => (i === 0 ? line : html`<br>${line}`))}`;
}

/** Where a service is opened: its path on the services' origin, or, with hosts, {@link hostLinks}. */
function addressCell(service: Service, view: Pick<ConsoleView, 'servicesOrigin' | 'publicOrigin'>): Html {
  if (service.hosts?.length) return hostLinks(service, view.publicOrigin);
  return html`<a href="${view.servicesOrigin}${serviceEntryPath(service.path)}" title="Open ${service.path} through the gateway"><code>${service.path}</code></a>`;
}

/**
 * The services table (design.md §4.6): name, path as a link (with hosts, a link on each host),
 * targets, whether sign-in is required,
 * enabled, last change, requests in the last hour, and the row's actions (with each service's
 * ETag from `etags`, by id).
 */
export function servicesTable(
  services: Service[],
  etags: Map<string, string>,
  requestsLastHour: Map<string, number>,
  view: Pick<ConsoleView, 'servicesOrigin' | 'publicOrigin'>,
): Html {
  if (services.length === 0) {
    return emptyState(
      'No services yet. Register an upstream under a public path, and Gatehouse starts forwarding and logging its traffic.',
      html`<a class="button" href="/dashboard/services/new">Create your first service</a>`,
    );
  }
  const row = (service: Service) => html`<tr>
<th scope="row" data-label="Name"><a href="/dashboard/services/${service.id}">${service.name}</a></th>
<td data-label="Path" class="wrap">${addressCell(service, view)}</td>
<td data-label="Targets" class="wrap">${targetsCell(service)}</td>
<td data-label="Sign-in">${service.requireAuth ? 'Required' : 'Open'}</td>
<td data-label="State">${badge(service.enabled, 'Enabled', 'Disabled')}</td>
<td data-label="Last change">${timeTag(service.updatedAt)}</td>
<td data-label="Requests, last hour" class="num">${formatCount(requestsLastHour.get(service.id) ?? 0)}</td>
<td class="row-actions">${serviceActions(service, etags.get(service.id)!)}</td>
</tr>`;
  return html`<div class="table-wrap"><table class="responsive services-table">
<caption class="visually-hidden">Registered services</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Path</th><th scope="col">Targets</th><th scope="col">Sign-in</th>
<th scope="col">State</th><th scope="col">Last change</th><th scope="col" class="num">Requests, last hour</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${services.map(row)}</tbody>
</table></div>`;
}
