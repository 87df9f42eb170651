import { sendJson } from '../../shared/http/http-response.js';
import type { Handler } from '../http/request-context.js';
import { createLogoutHandler, type LogoutDeps } from './logout-route.js';
import { createSignInHandlers, type SignInDeps } from './sign-in-routes.js';

/** What the authentication endpoints work with: sign-in's (sign-in-routes.ts) and logout's (logout-route.ts). */
export interface AuthDeps extends SignInDeps, LogoutDeps {}

// The session user of interface.md §2.4, exactly: groups stay server-side (design.md §4.7).
const profile: Handler = (ctx) => {
  const { sub, name, email, isAdmin } = ctx.session!.user;
  sendJson(ctx.res, 200, { user: { sub, name, email, isAdmin } });
};

const csrfToken: Handler = (ctx) => sendJson(ctx.res, 200, { csrfToken: ctx.session!.csrfToken });

/**
 * The authentication endpoints (interface.md §4.1, §5; design.md §4): login, callback (POST for form_post,
 * GET for query), logout, profile, and the CSRF token.
 */
export function createAuthHandlers(deps: AuthDeps) {
  const { login, callback } = createSignInHandlers(deps);
  return { login, callback, logout: createLogoutHandler(deps), profile, csrfToken };
}
