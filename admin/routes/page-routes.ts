import type { Config } from '../../shared/config.js';
import { redirect, sendHtml } from '../../shared/http-response.js';
import type { RelyingParty } from '../oidc/relying-party.js';
import { safeReturnTo } from '../oidc/return-to.js';
import { favicon } from './favicon.js';
import { homePage } from '../../shared/pages/home-page.js';
import { loginPage } from '../../shared/pages/login-page.js';
import type { Handler } from '../request-context.js';
import type { ServiceRegistry } from '../service-registry.js';

/**
 * The HTML pages of the admin plane: home at `/` (design.md §5), or on ADMIN_URL's origin a redirect
 * to the console there, the login page (interface.md §4.1), and the gateway's icon.
 */
export function createPageHandlers(deps: { config: Config; registry: ServiceRegistry; relyingParty: RelyingParty }) {
  const home: Handler = (ctx) => {
    const services = deps.registry.list().filter((service) => service.enabled);
    const { session, origin } = ctx;
    sendHtml(ctx.res, 200, homePage({ user: session?.user ?? null, services, csrfToken: session?.csrfToken, consoleOrigin: origin.consoleOrigin }));
  };

  const consoleHome: Handler = (ctx) => redirect(ctx.res, '/dashboard');

  const loginPageHandler: Handler = (ctx) => {
    const returnTo = safeReturnTo(ctx.url.searchParams.get('returnTo'));
    sendHtml(ctx.res, 200, loginPage({ returnTo, issuerHost: deps.relyingParty.issuerHost }));
  };

  return { home, consoleHome, loginPage: loginPageHandler, favicon };
}
