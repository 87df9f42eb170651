import { html, type Html } from '../../../shared/pages/html.js';
import type { TargetState } from '../../../shared/types.js';
import type { ProxyTargetHealth, ServiceHealth, TargetHealthView } from '../../registry/service-health.js';
import { formatCount, timeTag } from '../fragments.js';

/** How the console names each state, and what it means. */
const STATES: Record<TargetState, { label: string; meaning: string }> = {
  healthy: { label: 'Healthy', meaning: 'Taking traffic' },
  unhealthy: { label: 'Unhealthy', meaning: 'Failing its active health checks' },
  ejected: { label: 'Ejected', meaning: 'Taken out of rotation for a while after failed requests (outlier detection)' },
  unknown: { label: 'Unknown', meaning: 'No proxy process knows yet' },
};

/**
 * A service's targets on its console page (design.md §4.13): each target's url, weight and
 * overall state, and under it every proxy process that reported it within the last minute with its
 * state there, since when, and its latest error. The table is a live region (live-regions.js
 * refreshes it every few seconds with the rest of the page), so states change without a reload.
 */
export function targetsPanel(health: ServiceHealth): Html {
  return html`<section class="targets" aria-labelledby="targets-heading">
<h2 id="targets-heading">Targets</h2>
<p class="hint">As the proxy processes see them, from their reports of the last minute. A target is shown healthy when every proxy that knows it says so; otherwise the problem most of them report.</p>
<div class="table-wrap" data-live="targets"><table class="responsive targets-table">
<caption class="visually-hidden">Targets and their health</caption>
<thead><tr><th scope="col">Target</th><th scope="col" class="num">Weight</th><th scope="col">State</th><th scope="col">Seen by</th></tr></thead>
<tbody>${health.targets.map(targetRow)}</tbody>
</table></div>
</section>`;
}

function targetRow(target: TargetHealthView): Html {
  return html`<tr data-target="${target.url}">
<th scope="row" data-label="Target" class="wrap"><code>${target.url}</code></th>
<td data-label="Weight" class="num">${formatCount(target.weight)}</td>
<td data-label="State">${stateBadge(target.state)}</td>
<td data-label="Seen by">${target.proxies.length === 0
    ? html`<span class="muted">No proxy process has reported this target in the last minute.</span>`
    : html`<ul class="proxy-states">${target.proxies.map(proxyLine)}</ul>`}</td>
</tr>`;
}

function proxyLine(seen: ProxyTargetHealth): Html {
  return html`<li data-proxy="${seen.proxy}"><code>${seen.proxy}</code> ${stateBadge(seen.state)} since ${timeTag(seen.since)}${
    seen.lastError === null ? '' : html`<br><span class="last-error">Last error: <code>${seen.lastError}</code></span>`
  }</li>`;
}

function stateBadge(state: TargetState): Html {
  const { label, meaning } = STATES[state];
  return html`<span class="badge target-${state}" title="${meaning}">${label}</span>`;
}
