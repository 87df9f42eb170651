import { html } from './html.js';
import { page } from './layout.js';

/**
 * The page of a protected service's 401 for a person (design.md §3.5): a sign-in link to the login
 * that returns to `target`, the raw request-target (path and query) they asked for, percent-encoded
 * into `returnTo`; on a service host (design.md §4.16) its own `/.gatehouse/login?rd=` (`loginPath`),
 * which sends the browser on to the sign-in origin.
 */
export function signInRequiredPage(target: string, loginPath = '/auth/login?returnTo='): string {
  const login = `${loginPath}${encodeURIComponent(target)}`;
  return page(
    'Sign in required',
    html`<h1>Sign in required</h1>
<p>You need to sign in to use this service.</p>
<p><a class="button" id="login" href="${login}">Sign in</a></p>`,
  );
}
