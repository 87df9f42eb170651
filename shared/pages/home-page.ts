import type { Service, SessionUser } from '../types.js';
import { html } from './html.js';
import { page } from './layout.js';
import { serviceEntryPath } from '../services/service-entry.js';
import { logoutForm } from './logout-page.js';

/** What the home page shows. */
export interface HomePageOptions {
  user: SessionUser | null;
  /** The enabled services. */
  services: Service[];
  /** The session's CSRF token (for the sign-out form); required with `user`. */
  csrfToken?: string;
  /** Where the console is: `''` (this origin) or ADMIN_URL's origin (design.md §4.5). */
  consoleOrigin: string;
}

/**
 * The gateway's home page at `/` while no service is registered there (design.md §5): who you are,
 * your sessions (`/auth/sessions`), sign in or out, the enabled services, and for admins the console and the admin endpoints.
 */
export function homePage(options: HomePageOptions): string {
  const { user, services } = options;
  const consoleAt = options.consoleOrigin;
  const who = user
    ? html`<p>Signed in as <strong id="user-name">${user.name}</strong> <span class="muted">${user.email}</span>${user.isAdmin ? ' · administrator' : ''}.</p>
<p><a href="/auth/sessions">Your sessions</a></p>
<p>${logoutForm(options.csrfToken ?? '')}</p>`
    : html`<p>You are not signed in.</p><p><a class="button" href="/auth/login-page">Sign in</a></p>`;
  const list = services.length
    ? html`<ul class="services">${services.map(
        (service) => html`<li><a href="${serviceEntryPath(service.path)}">${service.name}</a> <code>${service.path}</code>${service.requireAuth ? html` <span class="muted">· sign-in required</span>` : ''}${service.description ? html`<br><span class="muted">${service.description}</span>` : ''}</li>`,
      )}</ul>`
    : html`<p class="muted">No services are available yet.${user?.isAdmin ? html` Register one in the <a href="${consoleAt}/dashboard/services/new">console</a>.` : ''}</p>`;
  const admin = user?.isAdmin
    ? html`<h2>Administration</h2>
<p><a class="button" href="${consoleAt}/dashboard">Console</a> <span class="muted">services, access logs, traffic and the audit trail</span></p>
<ul>
<li><a href="${consoleAt}/api/services">/api/services</a>: the registry (JSON)</li>
<li><a href="${consoleAt}/dashboard/stats">/dashboard/stats</a>: statistics</li>
<li><a href="${consoleAt}/dashboard/logs">/dashboard/logs</a>: the audit log</li>
<li><a href="${consoleAt}/auth/csrf-token">/auth/csrf-token</a>: your CSRF token for API writes</li></ul>${consoleAt ? html`<p class="muted">The console has its own origin, <code>${consoleAt}</code>, and its own sign-in.</p>` : ''}`
    : '';
  return page('Home', html`<h1>Gatehouse</h1>${who}<h2>Services</h2>${list}${admin}`, options.csrfToken);
}
