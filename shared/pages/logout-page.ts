import { html, type Html } from './html.js';
import { page } from './layout.js';

/**
 * The sign-out control of every gateway page: a form that POSTs `/auth/logout` with the
 * session's CSRF token as `_csrf` (design.md §5 "logout methods"), so no cross-site link or image can sign anyone
 * out. `className` styles the button (`button secondary`, or `link-button` in the console's header).
 */
export function logoutForm(csrfToken: string, className = 'button secondary', action = '/auth/logout'): Html {
  return html`<form class="logout" method="post" action="${action}"><input type="hidden" name="_csrf" value="${csrfToken}"><button type="submit" class="${className}">Sign out</button></form>`;
}

/**
 * `GET /auth/logout` from another site (design.md §5 "logout methods"): a link elsewhere must not sign
 * the user out, so they confirm here, with the form that POSTs.
 */
export function logoutConfirmPage(csrfToken: string, action = '/auth/logout'): string {
  return page(
    'Sign out',
    html`<h1>Sign out?</h1>
<p>A link asked to sign you out of the gateway. Confirm to end your session.</p>
${logoutForm(csrfToken, 'button', action)}
<p><a href="/">Stay signed in</a></p>`,
    csrfToken,
  );
}
