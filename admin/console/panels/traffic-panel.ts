import { html, type Html } from '../../../shared/pages/html.js';

/**
 * The traffic charts of one service, or of all services (`serviceId` undefined): requests by status
 * class and p50/p95 latency, over the last hour or day. charts.js fills them from
 * `GET /dashboard/traffic` with uPlot and refreshes them every few seconds.
 */
export function trafficPanel(serviceId?: string): Html {
  return html`<section class="traffic" data-traffic${serviceId ? html` data-service-id="${serviceId}"` : ''} aria-labelledby="traffic-heading">
<div class="section-head">
  <h2 id="traffic-heading">Traffic${serviceId ? '' : ', all services'}</h2>
  <div class="range-switch" role="group" aria-label="Time range">
    <button type="button" class="button small secondary" data-range="1h" aria-pressed="true">Last hour</button>
    <button type="button" class="button small secondary" data-range="1d" aria-pressed="false">Last day</button>
  </div>
</div>
<p class="chart-summary" data-chart-summary aria-live="polite">Loading traffic…</p>
<div class="charts">
  <figure>
    <figcaption data-caption="requests">Requests per minute, by status class</figcaption>
    <div class="chart" data-chart="requests" role="img" aria-label="Requests per minute by status class"></div>
  </figure>
  <figure>
    <figcaption>Latency in ms: p50 and p95</figcaption>
    <div class="chart" data-chart="latency" role="img" aria-label="Latency percentiles p50 and p95 in milliseconds"></div>
  </figure>
</div>
</section>`;
}
