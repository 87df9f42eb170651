import type { Config } from '../../shared/config/config.js';
import type { Service, SessionUser } from '../../shared/types.js';
import { compileAccessPolicy, type CompiledAccessPolicy } from '../../shared/services/access-policy.js';
import { redirect, sendHtml } from '../../shared/http/http-response.js';
import type { RelyingParty } from '../oidc/relying-party.js';
import { safeReturnTo } from '../../shared/http/return-to.js';
import { favicon } from './favicon.js';
import { homePage } from '../../shared/pages/home-page.js';
import { loginPage } from '../../shared/pages/login-page.js';
import type { Handler } from '../http/request-context.js';
import type { ServiceRegistry } from '../registry/service-registry.js';

/**
 * The HTML pages of the admin plane: home at `/` (design.md §5), or on ADMIN_URL's origin a redirect
 * to the console there, the login page (interface.md §4.1), and the gateway's icon.
 */
export function createPageHandlers(deps: { config: Config; registry: ServiceRegistry; relyingParty: RelyingParty }) {
  const policyOf = compiledPolicies();
  const home: Handler = (ctx) => {
    const { session, origin } = ctx;
    const user = session?.user ?? null;
    const services = deps.registry.snapshot().filter((service) => service.enabled && mayListTo(service, user, policyOf));
    sendHtml(ctx.res, 200, homePage({ user, services, csrfToken: session?.csrfToken, consoleOrigin: origin.consoleOrigin }));
  };

  const consoleHome: Handler = (ctx) => redirect(ctx.res, '/dashboard');

  const loginPageHandler: Handler = (ctx) => {
    const returnTo = safeReturnTo(ctx.url.searchParams.get('returnTo'));
    sendHtml(ctx.res, 200, loginPage({ returnTo, issuerHost: deps.relyingParty.issuerHost }));
  };

  return { home, consoleHome, loginPage: loginPageHandler, favicon };
}

/**
 * Whether the home page lists `service` to `user` (null: not signed in). A service with an access
 * policy (design.md §4.7) is listed only to the callers it lets in, and to admins, who see the
 * whole registry anyway: its name and prefix are not shown to people it refuses. Anyone sees the
 * services without one (those that require a sign-in say so).
 */
function mayListTo(service: Service, user: SessionUser | null, policyOf: PolicyOf): boolean {
  if (user?.isAdmin) return true;
  const policy = policyOf(service);
  return policy === undefined || (user !== null && policy.allows(user));
}

/** A service's compiled access policy; undefined when it has none. */
type PolicyOf = (service: Service) => CompiledAccessPolicy | undefined;

/**
 * Compiles each service's policy once per registry change rather than on every home-page request:
 * keyed by the service object, which the registry's snapshot keeps until its next write
 * (ServiceRegistry.snapshot), so a changed service is a new key and is compiled afresh, and the
 * entries of the services it replaced go with them.
 */
function compiledPolicies(): PolicyOf {
  const compiled = new WeakMap<Service, CompiledAccessPolicy | undefined>();
  return (service) => {
    if (!compiled.has(service)) compiled.set(service, compileAccessPolicy(service.access));
    return compiled.get(service);
  };
}
