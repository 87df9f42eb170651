import { html } from './html.js';
import { page } from './layout.js';

/**
 * The page of a protected service's 401 for a person (design.md §3.5): a sign-in link to the login
 * that returns to `target`, the raw request-target (path and query) they asked for, percent-encoded
 * into `returnTo`.
 */
export function signInRequiredPage(target: string): string {
  const login = `/auth/login?returnTo=${encodeURIComponent(target)}`;
  return page(
    'Sign in required',
    html`<h1>Sign in required</h1>
<p>You need to sign in to use this service.</p>
<p><a class="button" id="login" href="${login}">Sign in</a></p>`,
  );
}
