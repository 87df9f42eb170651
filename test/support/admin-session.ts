/**
 * The setup the tests of the admin API, the console and the browser share: a gateway (embedded,
 * with or without the test identity provider, or the split topology of processes and Redis), an
 * administrator signed in, and a client for its API; an echo upstream and Chromium when asked for.
 *
 * `useAdminSession()` registers, in the file or `describe` that calls it, a `before` hook that
 * starts all that and an `after` hook that stops it: Chromium, then the gateway (with its identity
 * provider and Redis), then the upstream, whichever of them a failed start left running.
 *
 * What a test adds (services, more sessions) goes in the `setup` callback, which that same hook
 * runs once all is started: Node 20 runs a file's top-level `before` hooks concurrently, so one of
 * the test's own could run before the gateway is up. `after` hooks run one after another in the
 * order they are registered: one that must run while the gateway still does is registered before
 * the call, one that must run after it stopped (a Redis Cluster's) after the call.
 */
import { after, before } from 'node:test';
import type { Browser } from 'playwright-core';
import type { SessionUser } from '../../shared/types.js';
import { apiClient, createService, type ApiCall } from './api-client.js';
import { launchBrowser } from './browser.js';
import { freePort } from './free-port.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { startGatewayWithProvider, type GatewayWithProvider, type ProviderSetup } from './gateway-with-provider.js';
import type { IdentityProvider } from './identity-provider.js';
import { signIn, type SignedIn } from './sessions.js';
import { startSplitGateway, type SplitGateway } from './split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from './upstream.js';

interface CommonOptions {
  /**
   * Settings of the gateway's process(es), over the starter's own; or a function, called first in
   * the `before` hook, that starts what the gateway needs (a Redis Cluster) and returns them.
   */
  env?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /**
   * The administrator's user, over the default (`admin-sub`, Ada Admin, `admin@example.com`); false:
   * no session (a test that signs in at the identity provider, or that must start with none).
   */
  admin?: Partial<SessionUser> | false;
  /** Starts an echo upstream (`upstream`). */
  upstream?: boolean;
  /** Launches Chromium (`browser`). */
  browser?: boolean;
}

export interface EmbeddedOptions extends CommonOptions {
  topology?: 'embedded';
  /**
   * Starts the test identity provider too (true, or its setup: users, back-channel logout…), which
   * the gateway trusts with `ADMIN_EMAILS=admin@example.com`. Without it OIDC points at an
   * unreachable placeholder: nobody can log in, sessions come only from `signIn`.
   */
  provider?: true | ProviderSetup;
  /** With `provider`: the gateway's host in PUBLIC_URL (`localhost` makes the provider's form_post cross-site). */
  gatewayHost?: string;
  /**
   * Serves the admin API and console on an origin of their own (ADMIN_URL, on a free ADMIN_PORT):
   * the administrator's session is that origin's and `call` goes there.
   */
  adminOrigin?: boolean;
  /** Where `call` goes without `adminOrigin`: the public origin (the default) or the admin port. */
  api?: 'public' | 'admin';
}

export interface SplitOptions extends CommonOptions {
  topology: 'split';
  /** The identity provider's options (users, refresh tokens, back-channel logout). */
  provider?: Parameters<typeof startSplitGateway>[1];
}

interface AdminSessionBase {
  /** The administrator's session (see the `admin` option). */
  readonly admin: SignedIn;
  /** A client of the admin API at {@link apiUrl}. */
  readonly call: ApiCall;
  readonly apiUrl: string;
  /** PUBLIC_URL's origin: where a browser goes (`http://localhost:PORT` with `gatewayHost: 'localhost'`). */
  readonly publicUrl: string;
  readonly upstream: EchoUpstream;
  readonly browser: Browser;
  /**
   * Another session, made straight in the session store (an administrator unless `isAdmin: false`),
   * the public origin's.
   */
  signIn(user?: Partial<SessionUser>): Promise<SignedIn>;
  /** Registers a service as the administrator; resolves with its id (throws unless 201). */
  createService(fields: Record<string, unknown>): Promise<string>;
}

export interface EmbeddedAdminSession extends AdminSessionBase {
  readonly gw: TestGateway;
  /** With `provider` only. */
  readonly idp: IdentityProvider;
  /** With `provider` only: signs `email` in through the provider's forms. */
  login: GatewayWithProvider['login'];
}

export interface SplitAdminSession extends AdminSessionBase {
  readonly split: SplitGateway;
}

/** What the `before` hook started; the `after` hook closes what is there. */
interface Started {
  gateway?: { close(): Promise<void> };
  gw?: TestGateway;
  withProvider?: GatewayWithProvider;
  split?: SplitGateway;
  upstream?: EchoUpstream;
  browser?: Browser;
  admin?: SignedIn;
  call?: ApiCall;
  apiUrl?: string;
  publicUrl?: string;
  /** Another session (the public origin's). */
  signIn?: (user?: Partial<SessionUser>) => Promise<SignedIn>;
  /** The administrator's session (the admin origin's with `adminOrigin`). */
  signInAdmin?: (user?: Partial<SessionUser>) => Promise<SignedIn>;
}

/**
 * Starts, in a `before` hook, what `options` ask for, then runs `setup`; stops it all in an `after`
 * hook (see the module's comment).
 */
export function useAdminSession(options?: EmbeddedOptions, setup?: (session: EmbeddedAdminSession) => Promise<void>): EmbeddedAdminSession;
export function useAdminSession(options: SplitOptions, setup?: (session: SplitAdminSession) => Promise<void>): SplitAdminSession;
export function useAdminSession(
  options: EmbeddedOptions | SplitOptions = {},
  setup?: (session: EmbeddedAdminSession & SplitAdminSession) => Promise<void>,
): EmbeddedAdminSession | SplitAdminSession {
  const started: Started = {};
  let ready = false;

  before(async () => {
    const env = typeof options.env === 'function' ? await options.env() : (options.env ?? {});
    const [gateway, upstream, browser] = await Promise.allSettled([
      options.topology === 'split' ? startSplit(env, options, started) : startEmbedded(env, options, started),
      options.upstream ? startEchoUpstream().then((u) => (started.upstream = u)) : undefined,
      options.browser ? launchBrowser().then((b) => (started.browser = b)) : undefined,
    ]);
    for (const result of [gateway, upstream, browser]) if (result.status === 'rejected') throw result.reason;
    if (options.admin !== false) started.admin = await started.signInAdmin!(options.admin);
    ready = true;
    await setup?.(session as EmbeddedAdminSession & SplitAdminSession);
  });

  after(async () => {
    const errors: unknown[] = [];
    for (const part of [started.browser, started.gateway, started.upstream]) {
      try {
        await part?.close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  });

  /** `started[name]`, once the `before` hook has run and when the options asked for it (`hint` says how). */
  const get = <K extends keyof Started>(name: K, hint = ''): NonNullable<Started[K]> => {
    if (!ready) throw new Error(`useAdminSession: ${name} is read before the gateway started (read it in a test or in setup)`);
    const value = started[name];
    if (value === undefined) throw new Error(`useAdminSession: no ${name}${hint && ` (${hint})`}`);
    return value as NonNullable<Started[K]>;
  };
  const common: AdminSessionBase = {
    get admin() {
      return get('admin', 'started with admin: false');
    },
    get call() {
      return get('call');
    },
    get apiUrl() {
      return get('apiUrl');
    },
    get publicUrl() {
      return get('publicUrl');
    },
    get upstream() {
      return get('upstream', 'start it with upstream: true');
    },
    get browser() {
      return get('browser', 'launch it with browser: true');
    },
    signIn: (user) => get('signIn')(user),
    createService: (fields) => createService(get('apiUrl'), get('admin', 'started with admin: false'), fields),
  };
  const session =
    options.topology === 'split'
      ? (Object.defineProperties(common, {
          split: { get: () => get('split') },
        }) as SplitAdminSession)
      : (Object.defineProperties(common, {
          gw: { get: () => get('gw') },
          idp: { get: () => get('withProvider', 'start it with provider').idp },
          login: { value: ((email, loginOptions) => get('withProvider', 'start it with provider').login(email, loginOptions)) satisfies GatewayWithProvider['login'] },
        }) as EmbeddedAdminSession);
  return session;
}

async function startEmbedded(env: Record<string, string>, options: EmbeddedOptions, started: Started): Promise<void> {
  let adminEnv: Record<string, string> = {};
  if (options.adminOrigin) {
    const adminPort = await freePort();
    adminEnv = { ADMIN_PORT: String(adminPort), ADMIN_URL: `http://127.0.0.1:${adminPort}` };
  }
  const settings = { ...adminEnv, ...env };
  let gw: TestGateway;
  if (options.provider) {
    const withProvider = await startGatewayWithProvider(settings, options.provider === true ? {} : options.provider, options.gatewayHost);
    started.gateway = started.withProvider = withProvider;
    gw = withProvider.gw;
  } else {
    gw = await startTestGateway(settings);
    started.gateway = gw;
  }
  started.gw = gw;
  started.apiUrl = options.adminOrigin || options.api === 'admin' ? gw.adminUrl : gw.origin;
  started.call = apiClient(started.apiUrl);
  started.publicUrl = gw.gateway.config.publicUrl.origin;
  started.signIn = (user) => signIn(gw, user);
  started.signInAdmin = (user) => signIn(gw, user, options.adminOrigin ? 'admin' : 'public');
}

async function startSplit(env: Record<string, string>, options: SplitOptions, started: Started): Promise<void> {
  const split = await startSplitGateway(env, options.provider);
  started.gateway = started.split = split;
  started.apiUrl = split.adminUrl;
  started.call = apiClient(split.adminUrl);
  started.publicUrl = split.env.PUBLIC_URL!;
  started.signIn = started.signInAdmin = (user) => split.signIn(user);
}
