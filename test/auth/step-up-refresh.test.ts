/**
 * What a session keeps of the sign-in for step-up (design.md §4.18) against the real provider:
 * `authTime` (epoch ms), `acr` and `amr` from the ID token at sign-in, and again from the ID token
 * of each refresh (SESSION_REVALIDATE 1s), which is still the original sign-in's (OIDC Core §12.2),
 * so a session stored without them (made before step-up) gets them back at its next refresh.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const USER = DEMO_USERS.find((user) => user.sub === 'demo-user')!;

describe("a session's sign-in facts, at sign-in and through refreshes", () => {
  let env: GatewayWithProvider;
  let upstream: EchoUpstream;

  before(async () => {
    upstream = await startEchoUpstream();
    env = await startGatewayWithProvider(
      { OIDC_SCOPES: 'openid profile email offline_access', SESSION_REVALIDATE: '1s' },
      { refreshTokens: true, acrValues: ['pwd', 'mfa'] },
    );
    await createService(env.gw.origin, await signIn(env.gw), { name: 'App', path: '/app', targetUrl: upstream.origin });
  });
  after(async () => {
    await env?.close();
    await upstream?.close();
  });

  const stored = async () => (await env.gw.gateway.sessions.find({ sub: USER.sub }))[0]!;
  const use = async (cookie: string) => {
    const response = await request(`${env.gw.origin}/app/x`, { headers: { cookie, accept: 'application/json' } });
    await response.body.dump();
    return response.statusCode;
  };

  it('keeps auth_time (as ms), acr and amr from the ID token, and takes them again from a refresh', async () => {
    const started = Date.now();
    env.idp.nextSignIn({ acr: 'mfa', amr: ['pwd', 'otp'] });
    const result = await env.login(USER.email);
    const cookie = `gw_session=${result.jar.get('gw_session', env.gw.origin)}`;
    const session = await stored();
    const { authTime, acr, amr } = session.user;
    assert.ok(authTime !== undefined && authTime >= Math.floor(started / 1000) * 1000 && authTime <= Date.now(), `authTime ${authTime}`);
    assert.deepEqual([acr, amr], ['mfa', ['pwd', 'otp']]);

    // as a session from before step-up: none of them
    await env.gw.gateway.sessions.update(session.handle, (s) => ({ ...s, user: { sub: s.user.sub, name: s.user.name, email: s.user.email, isAdmin: s.user.isAdmin } }));
    await eventually('refreshed at the provider', async () => {
      assert.equal(await use(cookie), 200);
      return (await stored()).checkedAt > session.checkedAt;
    });
    const refreshed = (await stored()).user;
    assert.deepEqual([refreshed.authTime, refreshed.acr, refreshed.amr], [authTime, 'mfa', ['pwd', 'otp']], "the refreshed ID token's, still the sign-in's");
  });
});
