import type { IncomingMessage } from 'node:http';
import type { Config } from '../../shared/config/config.js';
import type { Session } from '../../shared/types.js';
import { PUBLIC_HANDOFF_HEADER } from '../../shared/http/gateway-paths.js';
import { GatewayCookies } from './gateway-cookies.js';

/**
 * One of the origins the admin plane answers on (design.md §4.5). Browsers isolate origins, not paths:
 * every proxied app's page runs on the public origin, so whatever the public origin serves, such a
 * page can read and drive. With ADMIN_URL set, the console and admin API live on their own origin
 * with their own session cookie (and so their own CSRF token), and the public origin serves only
 * the pages and sign-in that proxied services need.
 */
export interface ServedOrigin {
  /** `public`: PUBLIC_URL, shared with the proxied services. `admin`: ADMIN_URL. */
  readonly kind: 'public' | 'admin';
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
        }
      : this.public;
  }

  /**
   * The origin of a request that arrived on the admin port: the public one when a proxy handed it
   * over (split mode marks those with {@link PUBLIC_HANDOFF_HEADER}), otherwise ADMIN_URL's. A
   * client that sets the mark itself only gets the public origin's narrower treatment.
   */
  ofAdminPortRequest(req: IncomingMessage): ServedOrigin {
    return req.headers[PUBLIC_HANDOFF_HEADER] === undefined ? this.admin : this.public;
  }
}

/**
 * Whether `origin` takes `session`: only one made on it (its scope), so a public-origin session
 * never opens the console on ADMIN_URL, nor an admin-origin session a service, whatever cookie
 * carries it.
 */
export function acceptsSession(origin: ServedOrigin, session: Session): boolean {
  return session.scope === origin.sessionScope;
}
