/**
 * Sessions end when they should (README "What ends a session"), against the real oidc-provider, in
 * embedded mode: the provider's back-channel logout (and the tokens it must refuse), a group removed
 * at the provider, a grant revoked, an outage within and past the grace, a burst of requests at the
 * moment a refresh is due, and the idle timeout. Split mode: test/split/split-session-ends.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { request } from 'undici';
import { createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { CLIENT_ID, CLIENT_SECRET, startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { TokenCipher } from '../../shared/identity/token-encryption.js';
import { DEMO_USERS, type DemoUser } from '../support/identity-provider.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const LOGOUT_EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };

/** One account per scenario, so that none sees another's changes. */
function user(name: string, groups = ['staff']): DemoUser {
  return { sub: `${name}-sub`, email: `${name}@example.com`, name, password: `${name}-password`, groups };
}
const USERS = {
  released: user('released'),
  loggedOut: user('logged-out'),
  bcl: user('bcl'),
  bclSub: user('bcl-sub'),
  refused: user('refused'),
  groups: user('groups'),
  revoked: user('revoked'),
  burst: user('burst'),
  outage: user('outage'),
};

const ENCRYPTION_KEY = randomBytes(32);
let env: GatewayWithProvider;
let upstream: EchoUpstream;
/** The gateway's log messages (info and up), in order. */
const logged: string[] = [];

before(async () => {
  upstream = await startEchoUpstream();
  env = await startGatewayWithProvider(
    {
      OIDC_SCOPES: 'openid profile email offline_access',
      SESSION_REVALIDATE: '1s',
      SESSION_REVALIDATE_GRACE: '3s',
      SESSION_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
      LOG_LEVEL: 'info',
    },
    { refreshTokens: true, backchannelLogout: true, users: [...DEMO_USERS, ...Object.values(USERS)] },
    '127.0.0.1',
    (line) => logged.push((JSON.parse(line) as { msg: string }).msg),
  );
  const admin = await signIn(env.gw);
  await createService(env.gw.origin, admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
  await createService(env.gw.origin, admin, { name: 'Staff', path: '/staff', targetUrl: upstream.origin, requireAuth: true, access: { groups: ['staff'] } });
});

after(async () => {
  await env?.close();
  await upstream?.close();
});

/** Signs `account` in through the provider; the gateway's session cookie. */
async function sessionOf(account: DemoUser): Promise<string> {
  const result = await env.login(account.email, { password: account.password });
  assert.equal(result.status, 302, result.body);
  return `gw_session=${result.jar.get('gw_session', env.gw.origin)}`;
}

async function statusOf(path: string, cookie: string): Promise<number> {
  const response = await request(`${env.gw.origin}${path}`, { headers: { cookie, accept: 'application/json' } });
  await response.body.dump();
  return response.statusCode;
}

/** Posts a logout token as the provider does (form field `logout_token`); the status and body. */
async function postLogout(body: string, contentType = 'application/x-www-form-urlencoded'): Promise<{ status: number; text: string; cacheControl: unknown }> {
  const response = await request(`${env.gw.origin}/auth/backchannel-logout`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: response.statusCode, text: await response.body.text(), cacheControl: response.headers['cache-control'] };
}

/** The claims of a logout token the provider would send for `sub` (and `sid`), a minute old at most. */
function logoutClaims(sub: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { iss: env.idp.issuer, aud: CLIENT_ID, iat: now, exp: now + 120, jti: randomBytes(12).toString('hex'), sub, events: LOGOUT_EVENT, ...extra };
}

async function storedSessions(sub: string) {
  return env.gw.gateway.sessions.find({ sub });
}

/** A refresh at the provider's token endpoint as the gateway's client; the HTTP status. */
async function refreshAtProvider(refreshToken: string): Promise<number> {
  const discovery = await request(`${env.idp.issuer}/.well-known/openid-configuration`);
  const { token_endpoint: tokenEndpoint } = (await discovery.body.json()) as { token_endpoint: string };
  const response = await request(tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
  });
  await response.body.dump();
  return response.statusCode;
}

describe('the refresh token kept at sign-in', () => {
  it('is sealed at rest, and given back to the provider (RFC 7009) when an admin ends the session', async () => {
    const cookie = await sessionOf(USERS.released);
    const [session] = await storedSessions(USERS.released.sub);
    assert.ok(session?.refreshToken?.startsWith('v1.'), 'sealed');
    const refreshToken = new TokenCipher([ENCRYPTION_KEY]).decrypt(session!.refreshToken!, session!.handle);
    assert.ok(!session!.refreshToken!.includes(refreshToken));
    assert.equal(await refreshAtProvider(refreshToken), 200, 'good at the provider while the session lives');
    const admin = await signIn(env.gw);
    const ended = await request(`${env.gw.origin}/api/sessions/${session!.handle}`, { method: 'DELETE', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken } });
    assert.equal(ended.statusCode, 204);
    assert.equal(await statusOf('/app/x', cookie), 401);
    await eventually('the provider to refuse the refresh token', async () => (await refreshAtProvider(refreshToken)) === 400, 3_000);
  });

  it('is given back when the user signs out', async () => {
    const cookie = await sessionOf(USERS.loggedOut);
    const [session] = await storedSessions(USERS.loggedOut.sub);
    const refreshToken = new TokenCipher([ENCRYPTION_KEY]).decrypt(session!.refreshToken!, session!.handle);
    const logout = await request(`${env.gw.origin}/auth/logout`, { headers: { cookie } });
    await logout.body.dump();
    assert.equal(logout.statusCode, 302);
    await eventually('the provider to refuse the refresh token', async () => (await refreshAtProvider(refreshToken)) === 400, 3_000);
  });
});

describe('back-channel logout (OpenID Connect Back-Channel Logout 1.0)', () => {
  it("the provider's logout token ends that provider session's session within a second, and only that one", async () => {
    const first = await sessionOf(USERS.bcl);
    const second = await sessionOf(USERS.bcl);
    assert.deepEqual([await statusOf('/app/x', first), await statusOf('/app/x', second)], [200, 200]);
    const sessions = await storedSessions(USERS.bcl.sub);
    assert.equal(new Set(sessions.map((session) => session.sid)).size, 2, 'two provider sessions, two sids');
    const older = sessions.reduce((a, b) => (a.createdAt <= b.createdAt ? a : b));
    const started = Date.now();
    await env.idp.backchannelLogout(USERS.bcl.sub, { sid: older.sid! });
    await eventually('the first session to end', async () => (await statusOf('/app/x', first)) === 401, 1_000);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(await statusOf('/app/x', second), 200, 'the other provider session keeps its session');
  });

  it('a token with only sub ends every session of the user; a sid the gateway never had is 200 too', async () => {
    const [a, b] = [await sessionOf(USERS.bclSub), await sessionOf(USERS.bclSub)];
    const unknownSid = await postLogout(`logout_token=${await env.idp.signLogoutToken(logoutClaims(USERS.bclSub.sub, { sid: 'never-seen' }))}`);
    assert.equal(unknownSid.status, 200);
    assert.deepEqual([await statusOf('/app/x', a), await statusOf('/app/x', b)], [200, 200]);
    const answer = await postLogout(`logout_token=${await env.idp.signLogoutToken(logoutClaims(USERS.bclSub.sub))}`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.cacheControl, 'no-store');
    assert.deepEqual([await statusOf('/app/x', a), await statusOf('/app/x', b)], [401, 401]);
    const audit = await request(`${env.gw.adminUrl}/dashboard/logs?limit=20`, { headers: { cookie: (await signIn(env.gw)).cookie } });
    const entry = ((await audit.body.json()) as { logs: Array<{ action: string; details: string; user_id: string | null }> }).logs.find(
      (log) => log.action === 'SESSION_REVOKED' && JSON.parse(log.details).subject === USERS.bclSub.sub,
    );
    assert.deepEqual(JSON.parse(entry!.details), { subject: USERS.bclSub.sub, email: USERS.bclSub.email, count: 2, by: 'identity provider', reason: 'backchannel-logout' });
    assert.equal(entry!.user_id, null);
  });

  it('refuses with 400 invalid_request, ending nothing: forged, replayed, wrong audience, with a nonce, without the event, not a form, no token', async () => {
    const cookie = await sessionOf(USERS.refused);
    const sub = USERS.refused.sub;
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT(logoutClaims(sub)).setProtectedHeader({ alg: 'RS256', kid: env.idp.signingKid, typ: 'logout+jwt' }).sign(privateKey);
    const replayed = await env.idp.signLogoutToken(logoutClaims('someone-else-sub'));
    assert.equal((await postLogout(`logout_token=${replayed}`)).status, 200, 'first use');
    const refused = [
      `logout_token=${forged}`,
      `logout_token=${replayed}`,
      `logout_token=${await env.idp.signLogoutToken(logoutClaims(sub, { aud: 'another-client' }))}`,
      `logout_token=${await env.idp.signLogoutToken(logoutClaims(sub, { nonce: 'n-0S6_WzA2Mj' }))}`,
      `logout_token=${await env.idp.signLogoutToken(logoutClaims(sub, { events: {} }))}`,
      `logout_token=${await env.idp.signLogoutToken({ ...logoutClaims(sub), sub: undefined })}`,
      'logout_token=',
      'nothing=here',
    ];
    for (const body of refused) {
      const answer = await postLogout(body);
      assert.deepEqual([answer.status, answer.text], [400, '{"error":"invalid_request"}'], body.slice(0, 80));
      assert.equal(answer.cacheControl, 'no-store');
    }
    assert.equal((await postLogout(JSON.stringify({ logout_token: replayed }), 'application/json')).status, 400);
    assert.equal((await postLogout(`logout_token=${'a'.repeat(9_000)}`)).status, 413);
    assert.equal(await statusOf('/app/x', cookie), 200, 'the session lives on');
  });
});

describe('back-channel logout under a rate limit', () => {
  it('is not refused when a provider offboards many users at once (RATE_LIMIT_GENERAL 2/15m)', async () => {
    const limited = await startGatewayWithProvider({ RATE_LIMIT_GENERAL: '2/15m' }, { backchannelLogout: true });
    try {
      const now = Math.floor(Date.now() / 1000);
      for (let n = 0; n < 6; n++) {
        const claims = { iss: limited.idp.issuer, aud: CLIENT_ID, iat: now, exp: now + 120, jti: `offboard-${n}`, sub: `leaver-${n}`, events: LOGOUT_EVENT };
        const response = await request(`${limited.gw.origin}/auth/backchannel-logout`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `logout_token=${await limited.idp.signLogoutToken(claims)}`,
        });
        await response.body.dump();
        assert.equal(response.statusCode, 200, `logout ${n}`);
      }
      const browser: number[] = [];
      for (let n = 0; n < 3; n++) {
        const response = await request(`${limited.gw.origin}/auth/profile`);
        await response.body.dump();
        browser.push(response.statusCode);
      }
      assert.deepEqual(browser, [401, 401, 429], 'browser requests are still counted');
    } finally {
      await limited.close();
    }
  });
});

describe('sessions re-checked at the provider (SESSION_REVALIDATE 1s)', () => {
  it('a group removed at the provider gives 403 on the service that needs it, within SESSION_REVALIDATE of use', async () => {
    const cookie = await sessionOf(USERS.groups);
    assert.equal(await statusOf('/staff/x', cookie), 200);
    env.idp.setUserGroups(USERS.groups.sub, []);
    const waited = await eventually('403 once the session is re-checked', async () => (await statusOf('/staff/x', cookie)) === 403, 5_000, 100);
    assert.ok(waited < 3_000, `${waited} ms`);
    assert.equal(await statusOf('/app/x', cookie), 200, 'still signed in');
    env.idp.setUserGroups(USERS.groups.sub, ['staff']);
    await eventually('200 again once the group is back', async () => (await statusOf('/staff/x', cookie)) === 200, 5_000, 100);
  });

  it('a grant revoked at the provider (account disabled) ends the session: 401, audited', async () => {
    const cookie = await sessionOf(USERS.revoked);
    assert.equal(await statusOf('/app/x', cookie), 200);
    env.idp.disableUser(USERS.revoked.sub);
    await eventually('401 once the refresh is refused', async () => (await statusOf('/app/x', cookie)) === 401, 5_000, 100);
    assert.deepEqual(await storedSessions(USERS.revoked.sub), []);
  });

  it('20 requests at the moment a refresh is due make exactly one token request, and all succeed', async () => {
    const cookie = await sessionOf(USERS.burst);
    const [session] = await storedSessions(USERS.burst.sub);
    await eventually('the session to fall due', () => Date.now() - session!.checkedAt >= 1_000, 3_000, 10);
    const before = env.idp.tokenRequests('refresh_token');
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusOf('/app/x', cookie)));
    assert.deepEqual(statuses, Array(20).fill(200));
    await eventually('the session re-checked', async () => ((await storedSessions(USERS.burst.sub))[0]?.checkedAt ?? 0) > session!.checkedAt, 3_000);
    assert.equal(env.idp.tokenRequests('refresh_token') - before, 1);
  });

  it('the provider down: sessions keep working within SESSION_REVALIDATE_GRACE (3s) and end after it', async () => {
    const cookie = await sessionOf(USERS.outage);
    await env.idp.stop();
    try {
      const stopped = Date.now();
      // Used all along: it stays 200 until the grace runs out after the first failed check.
      let lastOk = stopped;
      await eventually('401 after the grace', async () => {
        const status = await statusOf('/app/x', cookie);
        if (status === 200) lastOk = Date.now();
        return status === 401;
      }, 10_000, 100);
      assert.ok(lastOk - stopped >= 2_500, `kept for ${lastOk - stopped} ms`);
    } finally {
      await env.idp.resume();
    }
    const outageLines = (text: string) => logged.filter((msg) => msg.startsWith(text)).length;
    assert.equal(outageLines('identity provider unreachable: sessions cannot be re-checked'), 1, 'one warning per outage');
    const another = await sessionOf(USERS.burst);
    await eventually('the outage logged as over once a check works', async () => {
      await statusOf('/app/x', another);
      return outageLines('identity provider reachable again: sessions are re-checked') === 1;
    }, 10_000, 200);
    // Over is over: the provider back does not bring the session back, and the end is audited.
    await eventually('the session ended in the store', async () => (await statusOf('/app/x', cookie)) === 401 && (await storedSessions(USERS.outage.sub)).length === 0, 5_000, 100);
    assert.equal(await statusOf('/app/x', cookie), 401);
    const audit = await request(`${env.gw.adminUrl}/dashboard/logs?limit=50`, { headers: { cookie: (await signIn(env.gw)).cookie } });
    const reasons = ((await audit.body.json()) as { logs: Array<{ action: string; details: string }> }).logs
      .filter((log) => log.action === 'SESSION_REVOKED')
      .map((log) => JSON.parse(log.details) as { subject: string; reason: string })
      .filter((details) => details.subject === USERS.outage.sub);
    assert.deepEqual(reasons.map((details) => details.reason), ['provider-unreachable']);
  });
});

describe('the idle timeout', () => {
  it('ends a session not used for SESSION_IDLE_TIMEOUT and keeps one in use', async () => {
    const idle = await startGatewayWithProvider({ SESSION_IDLE_TIMEOUT: '2s' });
    try {
      const admin = await signIn(idle.gw);
      await createService(idle.gw.origin, admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
      const login = async () => `gw_session=${(await idle.login('user@example.com')).jar.get('gw_session', idle.gw.origin)}`;
      const [used, unused] = [await login(), await login()];
      const status = async (cookie: string) => {
        const response = await request(`${idle.gw.origin}/app/x`, { headers: { cookie, accept: 'application/json' } });
        await response.body.dump();
        return response.statusCode;
      };
      const started = Date.now();
      while (Date.now() - started < 3_000) {
        assert.equal(await status(used), 200, 'a session in use stays');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.equal(await status(unused), 401, 'unused for 3 s');
      assert.equal(await status(used), 200);
    } finally {
      await idle.close();
    }
  });
});
