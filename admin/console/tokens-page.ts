import { html, type Html } from '../../shared/pages/html.js';
import type { ApiToken } from '../credentials/api-tokens.js';
import type { TokenScope } from '../credentials/token-scope.js';
import { DEFAULT_TOKEN_LIFETIME_DAYS, MAX_TOKEN_NAME_LENGTH, TOKEN_LIFETIMES_DAYS } from '../credentials/token-validation.js';
import { consolePage, csrfInput, type ConsoleView } from './console-layout.js';
import { emptyState, timeTag } from './fragments.js';

/** How each scope reads in the form, and in the list (`short`). */
const SCOPE_LABELS: Record<TokenScope, { long: string; short: string }> = {
  read: { long: 'Read: GET requests only', short: 'Read' },
  write: { long: "Write: every admin API request, except tokens and ending administrators' sessions", short: 'Write' },
  'write sessions': { long: "Write and sessions: also ends administrators' sessions", short: 'Write, sessions' },
};

export interface TokensPageData {
  tokens: ApiToken[];
  /** Emails of the admins who created them, by subject (from their latest sign-in). */
  emails: Map<string, string>;
  /** Now, epoch ms: which tokens have expired. */
  now: number;
}

/**
 * `GET /dashboard/tokens`: the admin API tokens (design.md §4.8). A form makes one through
 * `POST /api/tokens` (tokens.js), and the page then shows its secret once, with a copy button;
 * the list (a live region) has each token's scope, creator, dates and a revoke button that asks
 * first.
 */
export function tokensPage(view: ConsoleView, data: TokensPageData): string {
  const lifetimes = [...TOKEN_LIFETIMES_DAYS.map((days) => [String(days), `${days} days`] as const), ['never', 'Never'] as const];
  const body = html`<h1>API tokens</h1>
<p class="muted">A token lets a script call the admin API on this origin with <code>Authorization: Bearer &lt;token&gt;</code>,
without a browser session or CSRF token. Tokens are made and revoked only here (or with a signed-in session), never with a token.</p>
<section aria-labelledby="new-token-heading">
<h2 id="new-token-heading">New token</h2>
<form class="token-form" method="post" novalidate data-token-form>
  ${csrfInput(view)}
  <div class="form-error" data-form-error role="alert" hidden></div>
  <div class="field">
    <label for="name">Name <span class="required">(required)</span></label>
    <input id="name" name="name" required maxlength="${MAX_TOKEN_NAME_LENGTH}" autocomplete="off" placeholder="deploy pipeline" aria-describedby="name-hint name-error">
    <p class="hint" id="name-hint">What uses it; the audit log names the token's actions by it.</p>
    <p class="field-error" id="name-error" data-error-for="name" hidden></p>
  </div>
  <div class="field">
    <label for="scope">Scope</label>
    <select id="scope" name="scope" aria-describedby="scope-hint scope-error">
      ${Object.entries(SCOPE_LABELS).map(([scope, label]) => html`<option value="${scope}">${label.long}</option>`)}
    </select>
    <p class="hint" id="scope-hint">A leaked write token cannot sign out the administrators who would revoke it; give the sessions scope only to a script that must.</p>
    <p class="field-error" id="scope-error" data-error-for="scope" hidden></p>
  </div>
  <div class="field">
    <label for="expiresInDays">Expires after</label>
    <select id="expiresInDays" name="expiresInDays" aria-describedby="expiresInDays-error">
      ${lifetimes.map(([value, label]) => html`<option value="${value}"${value === String(DEFAULT_TOKEN_LIFETIME_DAYS) ? ' selected' : ''}>${label}</option>`)}
    </select>
    <p class="field-error" id="expiresInDays-error" data-error-for="expiresInDays" hidden></p>
  </div>
  <div class="buttons"><button type="submit" class="button">Create token</button></div>
</form>
<div class="new-secret" data-new-secret hidden>
  <p><strong>Copy the new token now.</strong> It is not shown again: the gateway keeps only its SHA-256.</p>
  <div class="secret-row">
    <input id="new-secret" readonly spellcheck="false" autocomplete="off" aria-label="The new token">
    <button type="button" class="button" data-copy-secret>Copy</button>
  </div>
  <p class="hint" data-copy-status role="status"></p>
</div>
</section>
<section aria-labelledby="tokens-heading">
<h2 id="tokens-heading">Tokens</h2>
<div data-live="tokens">${tokensTable(data)}</div>
</section>`;
  return consolePage(view, { title: 'API tokens', section: 'tokens', body, live: true, scripts: ['form-errors.js', 'tokens.js'] });
}

/** The tokens not revoked, newest first: name, scope, creator, created, last used, expiry, revoke. */
function tokensTable({ tokens, emails, now }: TokensPageData): Html {
  if (tokens.length === 0) return emptyState('No tokens yet. Create one above for a script that calls the admin API.');
  const creator = (sub: string) => {
    const email = emails.get(sub);
    return email ? html`${email}<br><code class="muted">${sub}</code>` : html`<code>${sub}</code>`;
  };
  const expires = (token: ApiToken) => {
    if (token.expiresAt === null) return 'Never';
    return Date.parse(token.expiresAt) <= now ? html`${timeTag(token.expiresAt)} <span class="badge off">Expired</span>` : timeTag(token.expiresAt);
  };
  const row = (token: ApiToken) => html`<tr>
<th scope="row" data-label="Name" class="wrap">${token.name}</th>
<td data-label="Scope">${SCOPE_LABELS[token.scope].short}</td>
<td data-label="Created by">${creator(token.createdBy)}</td>
<td data-label="Created">${timeTag(token.createdAt)}</td>
<td data-label="Last used">${token.lastUsedAt ? timeTag(token.lastUsedAt) : html`<span class="muted">Never</span>`}</td>
<td data-label="Expires">${expires(token)}</td>
<td class="row-actions"><button type="button" class="button small danger" data-revoke-token data-id="${token.id}" data-name="${token.name}"
  data-focus-key="revoke-${token.id}" aria-label="Revoke ${token.name}">Revoke</button></td>
</tr>`;
  return html`<div class="table-wrap"><table class="responsive tokens-table">
<caption class="visually-hidden">API tokens, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Created by</th><th scope="col">Created</th>
<th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${tokens.map(row)}</tbody>
</table></div>`;
}
