import { html } from './html.js';
import type { Service, SessionUser } from '../types.js';
import { page } from './layout.js';

/**
 * The page of an access policy's 403 for a person (design.md §4.7): the service by its name, the
 * account they are signed in with (its verified email, else its name, else its subject), and a
 * link that signs out (a same-origin `GET /auth/logout` does, design.md §5 "logout methods"), so
 * they can sign in with another account. Without `user` (a `deny` rule's 403 to a caller not
 * signed in, design.md §4.18), the page says the path is closed to everyone.
 */
export function accessDeniedPage(service: Service, user: SessionUser | undefined): string {
  if (user === undefined) {
    return page(
      'Access denied',
      html`<h1>Access denied</h1>
<p class="error" role="alert">This part of <strong id="service">${service.name}</strong> is closed.</p>
<p><a class="button secondary" href="/">Home</a></p>`,
    );
  }
  const account = user.email || user.name || user.sub;
  return page(
    'Access denied',
    html`<h1>Access denied</h1>
<p class="error" role="alert">Your account <strong id="account">${account}</strong> may not use <strong id="service">${service.name}</strong>.</p>
<p>This service is open to some people, groups or email domains only. Ask its administrators for access, or sign out and sign in with another account.</p>
<p><a class="button" id="logout" href="/auth/logout">Sign out</a> <a class="button secondary" href="/">Home</a></p>`,
  );
}
