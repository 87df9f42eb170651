import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import type { IdTokenTamperKind } from '../support/identity-provider.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { signIn } from '../support/sessions.js';

let env: GatewayWithProvider;

before(async () => {
  env = await startGatewayWithProvider();
});
after(() => env.close());

const CASES: Array<[IdTokenTamperKind, RegExp]> = [
  ['wrong-aud', /aud/],
  ['wrong-iss', /iss/],
  ['wrong-nonce', /nonce/],
  ['expired', /exp/],
  ['bad-signature', /signature/i],
];

for (const [kind, reason] of CASES) {
  test(`an ID token with ${kind} creates no session (400, LOGIN_FAILED audited)`, async () => {
    env.idp.tamperNextIdToken(kind);
    const result = await env.login('admin@example.com');
    assert.equal(result.status, 400);
    assert.equal(result.jar.get('gw_session', env.gw.origin), undefined);
    assert.match(result.body, /Sign-in failed/);

    const admin = await signIn(env.gw);
    const logs = await request(`${env.gw.origin}/dashboard/logs`, { headers: { cookie: admin.cookie } });
    const newest = ((await logs.body.json()) as { logs: Array<{ action: string; details: string }> }).logs[0]!;
    assert.equal(newest.action, 'LOGIN_FAILED');
    assert.match(JSON.parse(newest.details).reason, reason);
  });
}

test('after the rejected tokens, an honest login still works', async () => {
  const result = await env.login('admin@example.com');
  assert.equal(result.status, 302);
  assert.ok(result.jar.get('gw_session', env.gw.origin));
});
