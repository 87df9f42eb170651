import { html } from '../../shared/pages/html.js';
import { consolePage, type ConsoleView } from './console-layout.js';
import { formatCount, pager } from './fragments.js';
import { sessionsTable, userLabel, type ConsoleSessionRow } from './sessions-table.js';

/** Rows per page of the console's Sessions page. */
export const CONSOLE_SESSIONS_PAGE_SIZE = 50;

/** Longest `user` the search takes (as `GET /api/sessions`): a subject is at most 255 characters, an email 320. */
export const MAX_SESSION_SEARCH_LENGTH = 320;

export interface SessionsPageData {
  rows: ConsoleSessionRow[];
  /** How many sessions match in all. */
  total: number;
  limit: number;
  offset: number;
  url: URL;
  /** The search (an email or a subject), or undefined for everyone's sessions. */
  user: string | undefined;
}

/**
 * `GET /dashboard/sessions?user=&offset=`: who is signed in (design.md §4.6). A search by email
 * or subject, then that user's live sessions (everyone's without one), newest first and paged like
 * the audit log; each can be revoked, and a searched user signed out everywhere after a
 * confirmation (sessions.js, through the sessions API). The list is a live region.
 */
export function sessionsPage(view: ConsoleView, data: SessionsPageData): string {
  const { rows, total, user } = data;
  const heading = user === undefined ? 'Everyone’s sessions' : `Sessions of ${user}`;
  const body = html`<h1>Sessions</h1>
<p class="muted">Who is signed in to the gateway, newest first. Revoking a session signs that browser out of every service within a second;
the person can sign in again unless the identity provider refuses them. Times are in your time zone; hover for UTC.</p>
<form class="filters" method="get" action="/dashboard/sessions" role="search" aria-label="Sessions">
  <div class="field"><label for="s-user">User (email or subject)</label>
    <input id="s-user" name="user" type="search" value="${user ?? ''}" maxlength="${MAX_SESSION_SEARCH_LENGTH}" autocomplete="off" spellcheck="false" placeholder="user@example.com"></div>
  <div class="field buttons"><button type="submit" class="button">Search</button>
    ${user !== undefined ? html`<a class="button secondary" href="/dashboard/sessions">Everyone</a>` : ''}</div>
</form>
<section aria-labelledby="sessions-heading">
<div${data.offset === 0 ? html` data-live="sessions"` : ''}>
<div class="section-head"><h2 id="sessions-heading">${heading} <span class="muted">(${formatCount(total)})</span></h2>
  ${user !== undefined ? signOutEverywhere(rows, view) : ''}</div>
${sessionsTable(rows, emptyText(user))}
${total > 0 ? pager({ url: data.url, total, offset: data.offset, shown: rows.length, limit: data.limit, label: 'Session pages' }) : ''}
</div>
</section>`;
  return consolePage(view, { title: 'Sessions', section: 'sessions', body, live: true, scripts: ['sessions.js'] });
}

function emptyText(user: string | undefined): string {
  if (user === undefined) return 'Nobody is signed in. Sessions appear here as people sign in.';
  return `${user} has no live session: no email or subject matches, or every session has ended or expired.`;
}

/**
 * A *Sign out everywhere* button for each user the search found (one, unless an email is shared
 * by several subjects): `DELETE /api/users/:sub/sessions` after a confirmation.
 */
function signOutEverywhere(rows: ConsoleSessionRow[], view: ConsoleView) {
  const users = new Map<string, ConsoleSessionRow['user']>();
  for (const row of rows) if (!users.has(row.user.sub)) users.set(row.user.sub, row.user);
  if (users.size === 0) return '';
  const several = users.size > 1;
  return html`<div class="actions">${[...users.values()].map((user) => {
    const label = userLabel(user);
    const self = user.sub === view.user.sub;
    return html`<button type="button" class="button danger" data-sign-out-user data-sub="${user.sub}" data-user="${label}"${self ? html` data-self="true"` : ''}
  data-focus-key="sign-out-${user.sub}" aria-label="Sign out ${label} everywhere">${several ? `Sign out ${label} everywhere` : 'Sign out everywhere'}</button>`;
  })}</div>`;
}
