/**
 * Redis stopped (design.md §2.1 "Redis unavailable"): every gateway page and API path answers
 * 503, an HTML page to a browser and `{ "error": … }` to an API client, never 500; in the split
 * topology and in the embedded gateway on Redis. The sessions used here were made while Redis was
 * up and never read since, so no process holds them in its cache of confirmed sessions and every
 * request has to ask Redis.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import type { Config } from '../../shared/config/config.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import { createLogger } from '../../shared/logger.js';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { sampleSession } from '../support/samples.js';
import type { SignedIn } from '../support/sessions.js';

/** What a browser and an API client send as `Accept`. */
const BROWSER = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
const API_CLIENT = 'application/json';

/** The messages of the 503s (the session store, or the gateway as a whole, unavailable). */
const UNAVAILABLE = ['Service unavailable', 'Session store unavailable'];

/** The gateway's own pages and API paths, and a protected service (`/private`, made by the test). */
const ROUTES: ReadonlyArray<readonly ['GET' | 'POST', string]> = [
  ['GET', '/auth/login'],
  ['GET', '/auth/logout'],
  ['POST', '/auth/logout'],
  ['GET', '/auth/sessions'],
  ['GET', '/auth/profile'],
  ['GET', '/api/services'],
  ['GET', '/api/sessions'],
  ['GET', '/dashboard'],
  ['GET', '/dashboard/sessions'],
  ['GET', '/'],
  ['GET', '/private/x'],
];

/** What one scenario needs of a running gateway. */
interface Gateway {
  /** Where browsers and API clients go (the first proxy in split mode). */
  publicUrl: string;
  /** Where the admin API is served directly (the admin port). */
  adminUrl: string;
  redis: RedisServer;
  /** Sessions of an administrator and of a user, made in Redis by a client no gateway process shares. */
  signInBoth(): Promise<SignedIn[]>;
  createService(fields: Record<string, unknown>): Promise<string>;
  upstreamOrigin: string;
}

/**
 * Sessions of an administrator and of a user made through a Redis client of the test's own (the
 * embedded gateway's own store would hold them in its cache of confirmed sessions).
 */
async function signInElsewhere(config: Config): Promise<SignedIn[]> {
  const backends = await openBackends(config, createLogger('silent', 'test'));
  try {
    const made: SignedIn[] = [];
    for (const isAdmin of [true, false]) {
      const user = { sub: isAdmin ? 'admin-sub' : 'user-sub', name: 'Someone', email: isAdmin ? 'admin@example.com' : 'user@example.com', isAdmin };
      const session = sampleSession({ user, idToken: null, expiresAt: Date.now() + config.sessionTtlMs });
      const id = await backends.sessions.create(session);
      made.push({ cookie: `${gatewayCookieNames(config.publicUrl).session}=${id}`, csrfToken: session.csrfToken, user });
    }
    return made;
  } finally {
    await backends.close();
  }
}

/** One request as a signed-in browser or API client; resolves with its status, type and body. */
async function ask(url: string, method: 'GET' | 'POST', accept: string, who: SignedIn): Promise<{ status: number; type: string; body: string }> {
  const headers: Record<string, string> = { accept, cookie: who.cookie, 'sec-fetch-site': 'same-origin' };
  if (method === 'POST') headers['x-csrf-token'] = who.csrfToken;
  const response = await request(url, { method, headers });
  return { status: response.statusCode, type: String(response.headers['content-type'] ?? ''), body: await response.body.text() };
}

/**
 * The attack: Redis goes away, then every route is asked by a browser and by an API client, as
 * an administrator and as a user; each answer is 503 in the client's format.
 */
async function everyRouteAnswers503(gw: Gateway): Promise<void> {
  await gw.createService({ name: 'Private', path: '/private', targetUrl: gw.upstreamOrigin, requireAuth: true });
  const people = await gw.signInBoth();
  await gw.redis.kill();
  try {
    for (const base of [gw.publicUrl, gw.adminUrl]) {
      for (const who of people) {
        for (const [method, path] of ROUTES) {
          const what = `${method} ${base}${path} as ${who.user.isAdmin ? 'an admin' : 'a user'}`;
          const page = await ask(`${base}${path}`, method, BROWSER, who);
          assert.equal(page.status, 503, `${what} (browser): ${page.body.slice(0, 200)}`);
          assert.match(page.type, /^text\/html/, what);
          assert.match(page.body, /<h1>Temporarily unavailable<\/h1>/, what);
          const api = await ask(`${base}${path}`, method, API_CLIENT, who);
          assert.equal(api.status, 503, `${what} (API client): ${api.body.slice(0, 200)}`);
          assert.match(api.type, /^application\/json/, what);
          assert.ok(UNAVAILABLE.includes((JSON.parse(api.body) as { error: string }).error), `${what}: ${api.body}`);
        }
      }
      // Without a session nothing needs Redis on these paths: whatever they answer, never a 500.
      for (const [method, path] of ROUTES) {
        const response = await request(`${base}${path}`, { method, headers: { accept: BROWSER } });
        await response.body.dump();
        assert.ok(response.statusCode < 500 || response.statusCode === 503, `${method} ${base}${path} anonymous: ${response.statusCode}`);
      }
    }
    // A sign-in completed at the provider cannot become a session: the callback answers 503 too.
    const signingIn = await loginThroughProvider({ loginUrl: `${gw.publicUrl}/auth/login`, email: 'user@example.com', password: 'user-password', jar: new CookieJar() });
    assert.equal(signingIn.url.replace(/\?.*$/, ''), `${gw.publicUrl}/auth/callback`);
    assert.equal(signingIn.status, 503, signingIn.body.slice(0, 200));
    assert.match(signingIn.body, /<h1>Temporarily unavailable<\/h1>/);
  } finally {
    await gw.redis.restart();
  }
}

describe('Redis stopped: split topology', () => {
  const env = useAdminSession({ topology: 'split', upstream: true });

  it('answers 503 on every gateway page and route, HTML to browsers, JSON to API clients, never 500', async () => {
    await everyRouteAnswers503({
      publicUrl: env.split.proxies[0].url,
      adminUrl: env.split.adminUrl,
      redis: env.split.redis,
      signInBoth: async () => [await env.split.signIn(), await env.split.signIn({ sub: 'user-sub', isAdmin: false })],
      createService: (fields) => env.createService(fields),
      upstreamOrigin: env.upstream.origin,
    });
  });
});

describe('Redis stopped: the embedded gateway on Redis', () => {
  let redis: RedisServer | undefined;
  const env = useAdminSession({
    provider: true,
    upstream: true,
    env: async () => {
      redis = await startRedis();
      return { REDIS_URL: redis.url };
    },
  });
  after(() => redis?.stop());

  it('answers 503 on every gateway page and route, HTML to browsers, JSON to API clients, never 500', async () => {
    await everyRouteAnswers503({
      publicUrl: env.publicUrl,
      adminUrl: env.gw.adminUrl,
      redis: redis!,
      signInBoth: () => signInElsewhere(env.gw.gateway.config),
      createService: (fields) => env.createService(fields),
      upstreamOrigin: env.upstream.origin,
    });
  });
});
