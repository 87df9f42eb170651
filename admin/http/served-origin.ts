import type { IncomingMessage } from 'node:http';
import type { Config } from '../../shared/config/config.js';
import type { Session } from '../../shared/types.js';
import { PUBLIC_HANDOFF_HEADER, RESERVED_PREFIX, SERVICE_HOST_PATHS } from '../../shared/http/gateway-paths.js';
import { normalizeHost } from '../../shared/services/host-names.js';
import { GatewayCookies } from './gateway-cookies.js';

/**
 * One of the origins the admin plane answers on (design.md §4.5). Browsers isolate origins, not paths:
 * every proxied app's page runs on the public origin, so whatever the public origin serves, such a
 * page can read and drive. With ADMIN_URL set, the console and admin API live on their own origin
 * with their own session cookie (and so their own CSRF token), and the public origin serves only
 * the pages and sign-in that proxied services need.
 */
export interface ServedOrigin {
  /**
   * `public`: PUBLIC_URL, shared with the proxied services. `admin`: ADMIN_URL. `host`: a service
   * host's reserved paths (`/.gatehouse/…`, design.md §4.16), whose session cookie names a link.
   */
  readonly kind: 'public' | 'admin' | 'host';
  /** The service host (normal form) of a `host` origin; undefined on the others. */
  readonly serviceHost?: string;
  /** The origin's URL (PUBLIC_URL or ADMIN_URL): redirect URIs and absolute links are built on it. */
  readonly url: URL;
  /** Whether the console (`/dashboard…`) and the admin API (`/api…`) are served here. */
  readonly servesConsole: boolean;
  /** Where the console is, for links to it: `''` (this origin) or ADMIN_URL's origin. */
  readonly consoleOrigin: string;
  /** Where the proxied services are, for links to them: `''` (this origin) or PUBLIC_URL's origin. */
  readonly servicesOrigin: string;
  /** The origin's own cookies: a session made here is carried by its own cookie name. */
  readonly cookies: GatewayCookies;
  /** The {@link Session.scope} of sessions made and accepted here (undefined: the public one). */
  readonly sessionScope: 'admin' | undefined;
  /** This origin's `redirect_uri`: `<origin>/auth/callback` (register it at the identity provider). */
  readonly callbackUrl: string;
  /** Where this origin's logout form posts (`/auth/logout`; `/.gatehouse/logout` on a service host). */
  readonly logoutPath: string;
  /**
   * Where the provider sends the browser after logout (`post_logout_redirect_uri`): the origin's `/`;
   * PUBLIC_URL's for a service host, so that only PUBLIC_URL's addresses are registered at the provider.
   */
  readonly afterLogoutUrl: string;
}

/** The origins of a deployment, and which one a request to the admin plane arrived on. */
export class ServedOrigins {
  readonly public: ServedOrigin;
  /** ADMIN_URL's origin; the public one again when ADMIN_URL is unset (one origin for all). */
  readonly admin: ServedOrigin;

  constructor(config: Config) {
    const adminUrl = config.adminUrl;
    this.public = {
      kind: 'public',
      url: config.publicUrl,
      servesConsole: adminUrl === undefined,
      consoleOrigin: adminUrl?.origin ?? '',
      servicesOrigin: '',
      cookies: new GatewayCookies(config.publicUrl),
      sessionScope: undefined,
      callbackUrl: `${config.publicUrl.origin}/auth/callback`,
      logoutPath: LOGOUT_PATH,
      afterLogoutUrl: `${config.publicUrl.origin}/`,
    };
    this.admin = adminUrl
      ? {
          kind: 'admin',
          url: adminUrl,
          servesConsole: true,
          consoleOrigin: '',
          servicesOrigin: config.publicUrl.origin,
          cookies: new GatewayCookies(adminUrl, 'admin'),
          sessionScope: 'admin',
          callbackUrl: `${adminUrl.origin}/auth/callback`,
          logoutPath: LOGOUT_PATH,
          afterLogoutUrl: `${adminUrl.origin}/`,
        }
      : this.public;
  }

  /**
   * The origin of a request that arrived on the admin port: the public one when a proxy handed it
   * over (split mode marks those with {@link PUBLIC_HANDOFF_HEADER}), otherwise ADMIN_URL's. A
   * client that sets the mark itself only gets the public origin's narrower treatment.
   */
  ofAdminPortRequest(req: IncomingMessage): ServedOrigin {
    if (req.headers[PUBLIC_HANDOFF_HEADER] === undefined) return this.admin;
    return this.ofHandoff(req, hostOfForwarded(req.headers['x-forwarded-host']));
  }

  /**
   * The origin of a request the data plane handed over: a service host's for its reserved paths
   * (`serviceHost`: the data plane found the request's host named by a service, design.md §4.16),
   * else the public one.
   */
  ofHandoff(req: IncomingMessage, serviceHost: string | undefined): ServedOrigin {
    if (serviceHost === undefined || !(req.url ?? '').startsWith(`${RESERVED_PREFIX}/`)) return this.public;
    return hostOrigin(this.public, serviceHost);
  }
}

const LOGOUT_PATH = '/auth/logout';

/**
 * A service host's origin: PUBLIC_URL's scheme and port on `host`, its own cookies (host-only, the
 * public names), no console, no sign-in of its own. Made per request: these are a sign-in's few
 * requests, and a host is the data plane's to vouch for, never remembered here.
 */
function hostOrigin(publicOrigin: ServedOrigin, host: string): ServedOrigin {
  const url = new URL(publicOrigin.url.origin);
  url.hostname = host;
  return {
    ...publicOrigin,
    kind: 'host',
    serviceHost: host,
    url,
    servesConsole: false,
    consoleOrigin: publicOrigin.consoleOrigin || publicOrigin.url.origin,
    servicesOrigin: '',
    cookies: new GatewayCookies(url),
    logoutPath: SERVICE_HOST_PATHS.logout,
  };
}

/**
 * The host name of `X-Forwarded-Host` as a proxy sets it for a service host (request-headers.ts:
 * the name as the data plane matched it, with PUBLIC_URL's port), or undefined.
 */
function hostOfForwarded(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const colon = value.lastIndexOf(':');
  return normalizeHost(colon === -1 ? value : value.slice(0, colon));
}

/**
 * Whether `origin` takes `session`: only one made on it (its scope), so a public-origin session
 * never opens the console on ADMIN_URL, nor an admin-origin session a service, whatever cookie
 * carries it.
 */
export function acceptsSession(origin: ServedOrigin, session: Session): boolean {
  return session.scope === origin.sessionScope;
}
