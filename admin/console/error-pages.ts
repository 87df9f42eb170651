import type { SessionUser } from '../../shared/types.js';
import { html } from '../../shared/pages/html.js';
import { page } from '../../shared/pages/layout.js';
import { logoutForm } from '../../shared/pages/logout-page.js';
import { consolePage, type ConsoleView } from './console-layout.js';

/**
 * The 403 page for a signed-in user who is not an administrator: says who they are signed in as,
 * why that is not enough, and how to get access.
 */
export function forbiddenPage(user: SessionUser, csrfToken: string): string {
  return page(
    'Administrators only',
    html`<h1>Administrators only</h1>
<p class="error" role="alert">You are signed in as <strong>${user.name || user.sub}</strong>${user.email ? html` (${user.email})` : ''}, but this account is not an administrator, so it cannot open the console.</p>
<p>An operator grants admin rights by adding your email to <code>ADMIN_EMAILS</code>, your subject (<code>${user.sub}</code>) to <code>ADMIN_SUBJECTS</code>, or one of your groups to <code>ADMIN_GROUPS</code>. Sign in again after that.</p>
<p><a class="button" href="/">Back to the home page</a> ${logoutForm(csrfToken)}</p>`,
    csrfToken,
  );
}

/** A console page for a failure inside the console (an unknown service, a bad link). */
export function consoleErrorPage(view: ConsoleView, title: string, message: string): string {
  const body = html`<h1>${title}</h1>
<p class="notice error" role="alert">${message}</p>
<p><a class="button" href="/dashboard">Back to the overview</a></p>`;
  return consolePage(view, { title, section: 'none', body });
}
