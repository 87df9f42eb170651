import { html, type Html } from '../../shared/pages/html.js';
import { userAgentText } from '../../shared/pages/user-agent-text.js';
import type { SessionView } from '../../shared/types.js';
import { emptyState, timeTag } from './fragments.js';

/** One session as the console's Sessions page lists it: what the sessions API shows, and where it is valid. */
export interface ConsoleSessionRow extends SessionView {
  /** Signed in on ADMIN_URL's origin and valid only there (design.md §4.5). */
  adminOrigin: boolean;
  /** The session of the admin looking at the page (it has no Revoke button: the header's Sign out ends it). */
  current: boolean;
}

/** The link to a user's sessions on the Sessions page (`user` is a subject or an email). */
export function userSessionsHref(user: string): string {
  return `/dashboard/sessions?user=${encodeURIComponent(user)}`;
}

/** How a session's user reads: their name, else their email, else their subject. */
export function userLabel(user: SessionView['user']): string {
  return user.email || user.name || user.sub;
}

/**
 * Live sessions as a table, newest first: who (linked to all their sessions), signed in, last seen,
 * expires, client address, browser (a summary, the full `User-Agent` in `title`), and a Revoke
 * button that ends that session through `DELETE /api/sessions/:id` (sessions.js). `empty` is what
 * the table says when there is nothing.
 */
export function sessionsTable(rows: ConsoleSessionRow[], empty: string): Html {
  if (rows.length === 0) return emptyState(empty);
  const row = (session: ConsoleSessionRow) => {
    const { user } = session;
    const browser = userAgentText(session.userAgent);
    const label = userLabel(user);
    const action = session.current
      ? html`<span class="badge on">This browser</span>`
      : html`<button type="button" class="button small danger" data-revoke-session data-id="${session.id}" data-user="${label}" data-browser="${browser}"
  data-focus-key="revoke-${session.id}" aria-label="Revoke the session of ${label} in ${browser}">Revoke</button>`;
    return html`<tr>
<th scope="row" data-label="User" class="wrap"><a href="${userSessionsHref(user.sub)}" title="Every session of ${label}">${user.name || label}</a>${user.email && user.name ? html`<br>${user.email}` : ''}<br><code class="muted">${user.sub}</code></th>
<td data-label="Signed in">${timeTag(session.createdAt)}</td>
<td data-label="Last seen">${timeTag(session.lastSeenAt)}</td>
<td data-label="Expires">${timeTag(session.expiresAt)}</td>
<td data-label="Address"><code>${session.ipAddress || '—'}</code></td>
<td data-label="Browser"><span title="${session.userAgent || 'No User-Agent was sent'}">${browser}</span>${session.adminOrigin ? html` <span class="badge off" title="Signed in on the console's own origin (ADMIN_URL), valid only there">Console</span>` : ''}</td>
<td class="row-actions">${action}</td>
</tr>`;
  };
  return html`<div class="table-wrap"><table class="responsive sessions-table">
<caption class="visually-hidden">Signed-in sessions, newest first</caption>
<thead><tr><th scope="col">User</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col">Expires</th>
<th scope="col">Address</th><th scope="col">Browser</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows.map(row)}</tbody>
</table></div>`;
}
