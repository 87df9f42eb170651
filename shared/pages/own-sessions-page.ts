import { html, Html } from './html.js';
import type { Session, SessionUser } from '../types.js';
import { page } from './layout.js';
import { logoutForm } from './logout-page.js';
import { userAgentText } from './user-agent-text.js';

/** One session in the list, as its owner sees it: never its id, CSRF token or tokens. */
export interface OwnSession {
  /** The public handle: the value the *Sign out this one* form sends. */
  handle: string;
  userAgent: string;
  ipAddress: string;
  /** Epoch ms. */
  createdAt: number;
  lastSeenAt: number;
  /** The session of the browser looking at the page. */
  current: boolean;
}

export interface OwnSessionsPageData {
  user: SessionUser;
  /** The current session's CSRF token, for the forms. */
  csrfToken: string;
  /** Newest first. */
  sessions: OwnSession[];
  /** Now, epoch ms (for "5 minutes ago"). */
  now: number;
  /** How many sessions the last action signed out, when the page follows one. */
  ended?: number;
}

/** The parts of a session {@link OwnSession} keeps. */
export function ownSession(session: Session, currentHandle: string): OwnSession {
  const { handle, userAgent, ipAddress, createdAt, lastSeenAt } = session;
  return { handle, userAgent, ipAddress, createdAt, lastSeenAt, current: handle === currentHandle };
}

/** The list's look, beyond the gateway pages' own (layout.ts). */
const STYLE = new Html(`<style>
ul.sessions { list-style: none; padding: 0; margin: 0 0 1.5rem; }
ul.sessions li { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem 1rem; padding: .75rem 0; border-bottom: 1px solid var(--line); }
ul.sessions .what { flex: 1 1 18rem; }
ul.sessions form { margin: 0; }
.foot { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; margin-top: 1.5rem; }
.badge { display: inline-block; margin-left: .4rem; padding: 0 .5rem; border-radius: 999px; font-size: .85rem; font-weight: 600; border: 1px solid currentColor; color: #15803d; }
.notice { padding: .6rem 1rem; border-left: 4px solid #15803d; background: rgba(21, 128, 61, .08); }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
</style>`);

/**
 * `GET /auth/sessions`: the browsers and devices signed in with the visitor's account on this
 * origin, newest first, the current one marked *This browser*; each other one has a *Sign out this
 * one* form (`POST /auth/sessions/revoke`) and all of them together *Sign out everywhere else*
 * (`POST /auth/sessions/revoke-others`), both with the session's CSRF token. The current session
 * is ended by the usual sign-out.
 */
export function ownSessionsPage(data: OwnSessionsPageData): string {
  const { user, csrfToken, sessions, now } = data;
  const csrf = html`<input type="hidden" name="_csrf" value="${csrfToken}">`;
  const others = sessions.filter((session) => !session.current).length;
  const item = (session: OwnSession) => {
    const browser = userAgentText(session.userAgent);
    const action = session.current
      ? html`<span class="muted">Ended by <em>Sign out</em> below.</span>`
      : html`<form method="post" action="/auth/sessions/revoke">${csrf}<input type="hidden" name="session" value="${session.handle}">
<button type="submit" class="button secondary">Sign out this one<span class="visually-hidden">: ${browser}, signed in ${utc(session.createdAt)}</span></button></form>`;
    return html`<li${session.current ? html` aria-current="true"` : ''}><div class="what">
<strong title="${session.userAgent || 'No User-Agent was sent'}">${browser}</strong>${session.current ? html`<span class="badge">This browser</span>` : ''}<br>
<span class="muted">From <code>${session.ipAddress || 'an unknown address'}</code> · signed in ${timeText(session.createdAt, now)} · last seen ${timeText(session.lastSeenAt, now)}</span>
</div>${action}</li>`;
  };
  const ended = data.ended === undefined ? '' : html`<p class="notice" role="status">${endedText(data.ended)}</p>`;
  const everywhereElse =
    others > 0
      ? html`<form method="post" action="/auth/sessions/revoke-others">${csrf}<button type="submit" class="button">Sign out everywhere else</button>
<span class="muted">${others === 1 ? 'ends the other session' : `ends the ${others} other sessions`}; this browser stays signed in.</span></form>`
      : html`<p class="muted">No other browser is signed in with your account.</p>`;
  return page(
    'Your sessions',
    html`${STYLE}<h1>Your sessions</h1>
<p>Signed in as <strong>${user.name || user.email || user.sub}</strong>${user.email && user.name ? html` <span class="muted">${user.email}</span>` : ''}.
These are the browsers and devices signed in to the gateway with your account, newest first. If you do not recognise one, sign it out: it is signed out of every service at once.</p>
${ended}
<ul class="sessions" aria-label="Your sessions">${sessions.map(item)}</ul>
${everywhereElse}
<div class="foot"><a href="/">Home</a> ${logoutForm(csrfToken, 'button secondary')}</div>`,
    csrfToken,
  );
}

function endedText(count: number): string {
  if (count === 0) return 'That session had already ended.';
  return count === 1 ? 'Signed out 1 session.' : `Signed out ${count} sessions.`;
}

/** `2024-05-01 12:34 UTC`. */
function utc(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A point in time as "5 minutes ago" (the page has no script to show local times), UTC in `title`. */
function timeText(ms: number, now: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}" title="${utc(ms)}">${ago(now - ms, ms)}</time>`;
}

function ago(elapsed: number, ms: number): string {
  const minutes = Math.floor(elapsed / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return minutes === 1 ? '1 minute ago' : `${minutes} minutes ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return hours === 1 ? '1 hour ago' : `${hours} hours ago`;
  const days = Math.floor(hours / 24);
  if (days < 14) return days === 1 ? 'yesterday' : `${days} days ago`;
  return `on ${utc(ms).slice(0, 10)}`;
}
