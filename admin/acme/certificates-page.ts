import { html, type Html } from '../../shared/pages/html.js';
import { consolePage, type ConsoleView } from '../console/console-layout.js';
import { emptyState, timeTag } from '../console/fragments.js';
import type { CertificateState, CertificateStatus } from './certificate-status.js';

/** How each state reads in the table (a badge, `on` for the good one). */
const STATES: Record<CertificateState, { label: string; on: boolean; title: string }> = {
  valid: { label: 'Valid', on: true, title: 'Served; renewed at two thirds of its lifetime' },
  pending: { label: 'Pending', on: false, title: 'No certificate yet: the first order is under way or due; a self-signed one is served meanwhile' },
  failing: { label: 'Failing', on: false, title: 'The last order failed; retried with backoff (the error says why)' },
  expired: { label: 'Expired', on: false, title: 'The certificate held has expired; orders keep being retried' },
};

/**
 * `GET /dashboard/certificates`: the certificates by ACME (design.md §4.15): per host, its state,
 * issuer, not-after, next renewal (or retry) and the last order's error. A live region, refreshed
 * every few seconds; `acme` false says how to turn ACME on instead.
 */
export function certificatesPage(view: ConsoleView, entries: readonly CertificateStatus[], acme: boolean): string {
  const body = html`<h1>Certificates</h1>
<p class="muted">Certificates the gateway obtains and renews by ACME for PUBLIC_URL's host, ADMIN_URL's and every service host but wildcards.
Times are in your time zone; hover for UTC.</p>
<section aria-labelledby="certificates-heading">
<div data-live="certificates">
<h2 id="certificates-heading" class="visually-hidden">Hosts</h2>
${acme ? certificatesTable(entries) : emptyState(html`ACME is off: set <code>ACME_EMAIL</code> (README "Certificates by ACME") and the gateway obtains certificates for its hosts by itself.`)}
</div>
</section>`;
  return consolePage(view, { title: 'Certificates', section: 'certificates', body, live: true });
}

function certificatesTable(entries: readonly CertificateStatus[]): Html {
  if (entries.length === 0) return emptyState('No host yet: PUBLIC_URL\'s host is an IP address or a single label, and no service names a host.');
  const when = (iso: string | null, none: string) => (iso === null ? html`<span class="muted">${none}</span>` : timeTag(iso));
  const row = (entry: CertificateStatus) => {
    const state = STATES[entry.status];
    return html`<tr>
<th scope="row" data-label="Host" class="wrap"><code>${entry.host}</code></th>
<td data-label="Status"><span class="badge ${state.on ? 'on' : 'off'}" title="${state.title}">${state.label}</span></td>
<td data-label="Issuer">${entry.issuer ?? html`<span class="muted">—</span>`}</td>
<td data-label="Not after">${when(entry.notAfter, '—')}</td>
<td data-label="Next renewal">${when(entry.nextRenewal, 'now')}</td>
<td data-label="Last error" class="wrap">${entry.lastError === null ? html`<span class="muted">—</span>` : entry.lastError}</td>
</tr>`;
  };
  return html`<div class="table-wrap"><table class="responsive certificates-table">
<caption class="visually-hidden">Certificates by ACME, by host</caption>
<thead><tr><th scope="col">Host</th><th scope="col">Status</th><th scope="col">Issuer</th><th scope="col">Not after</th>
<th scope="col">Next renewal</th><th scope="col">Last error</th></tr></thead>
<tbody>${entries.map(row)}</tbody>
</table></div>`;
}
