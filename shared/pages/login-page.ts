import { html } from './html.js';
import { page } from './layout.js';

/**
 * The login page (interface.md §4.1 `GET /auth/login-page`): one button that starts the OpenID Connect
 * login, carrying `returnTo` through.
 */
export function loginPage(options: { returnTo: string; issuerHost: string | null; error?: string }): string {
  const href = `/auth/login?returnTo=${encodeURIComponent(options.returnTo)}`;
  return page(
    'Sign in',
    html`<h1>Sign in</h1>
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
<p>This gateway asks your organisation's identity provider who you are${options.issuerHost ? html` (<strong>${options.issuerHost}</strong>)` : ''}.</p>
<p><a class="button" id="login" href="${href}">Sign in with your identity provider</a></p>`,
  );
}

/**
 * Shown with status 400 when a callback fails; says why without revealing anything secret.
 * `retry`: where "Try again" leads (the login page; a service host's `/`, which starts a sign-in).
 */
export function loginFailedPage(reason: string, retry = '/auth/login-page'): string {
  return page(
    'Sign-in failed',
    html`<h1>Sign-in failed</h1>
<p class="error" role="alert">${reason}</p>
<p><a class="button" href="${retry}">Try again</a></p>`,
  );
}
