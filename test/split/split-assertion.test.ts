/**
 * The identity assertion in the production topology (design.md §4.7, §2.1): the admin process
 * makes the key and keeps it in its SQLite file, the proxy processes get it over Redis, sign with
 * it and publish it, and a real upstream process verifies what any of them sends.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import type { ProxyProcess } from '../support/split-gateway.js';
import { startVerifyingUpstream, type Verdict, type VerifyingUpstream } from '../support/verifying-upstream.js';

let upstream: VerifyingUpstream;
let user: { cookie: string };

const env = useAdminSession({ topology: 'split' }, async (env) => {
  upstream = await startVerifyingUpstream(env.publicUrl, `${env.publicUrl}/verified`);
  user = await env.split.signIn({ sub: 'split-user', name: 'Split User', email: 'split@example.com', isAdmin: false, groups: ['ops'] });
  await env.split.createService(env.admin, { name: 'Verified', path: '/verified', targetUrl: upstream.origin, requireAuth: true });
});
after(() => upstream?.close());

async function kidsOf(proxy: ProxyProcess): Promise<string[]> {
  const response = await request(`${proxy.url}/.well-known/jwks.json`);
  assert.equal(response.statusCode, 200);
  return ((await response.body.json()) as JSONWebKeySet).keys.map((key) => key.kid!);
}

/** The upstream's verdict on the user's request through `proxy`, once the service is routed there. */
async function verdictThrough(proxy: ProxyProcess): Promise<{ status: number; verdict: Verdict }> {
  let answer: { status: number; verdict: Verdict } | undefined;
  await eventually(`the service routed on ${proxy.url}`, async () => {
    const response = await request(`${proxy.url}/verified/x`, { headers: { cookie: user.cookie } });
    if (response.statusCode === 404) return (await response.body.dump(), false);
    answer = { status: response.statusCode, verdict: (await response.body.json()) as Verdict };
    return true;
  });
  return answer!;
}

test('every proxy signs with the key the admin process made, and the upstream verifies what each sends', async () => {
  const [a, b] = env.split.proxies;
  const kids = await kidsOf(a);
  assert.equal(kids.length, 1);
  assert.deepEqual(await kidsOf(b), kids);
  for (const proxy of [a, b]) {
    const { status, verdict } = await verdictThrough(proxy);
    assert.equal(status, 200, JSON.stringify(verdict));
    assert.equal(verdict.kid, kids[0]);
    assert.deepEqual(
      { iss: verdict.payload!.iss, aud: verdict.payload!.aud, sub: verdict.payload!.sub, email: verdict.payload!.email, groups: verdict.payload!.groups },
      { iss: env.publicUrl, aud: `${env.publicUrl}/verified`, sub: 'split-user', email: 'split@example.com', groups: ['ops'] },
    );
  }
});

test('a rotation on the admin process reaches every proxy within a second; a proxy started later gets the keys', async () => {
  const [a, b] = env.split.proxies;
  const [oldKid] = await kidsOf(a);
  const rotated = await apiClient(env.split.adminUrl)('POST', '/api/assertion-keys/rotate', { as: env.admin });
  assert.equal(rotated.status, 200, rotated.text);
  const newKid: string = rotated.json.kid;
  for (const proxy of [a, b]) {
    const waited = await eventually(`the new key on ${proxy.url}`, async () => (await kidsOf(proxy))[0] === newKid, 5_000, 10);
    assert.ok(waited < 1_000, `${waited} ms`);
    assert.deepEqual(await kidsOf(proxy), [newKid, oldKid]);
  }

  const late = await env.split.startProxy();
  try {
    assert.deepEqual(await kidsOf(late), [newKid, oldKid]);
    const { assertion } = (await verdictThrough(late)).verdict;
    assert.equal(decodeProtectedHeader(assertion!).kid, newKid);
    // The running upstream may not look for a new key for 30 s after its last look (jose's
    // cooldown), so a new instance of it judges this one.
    const fresh = await startVerifyingUpstream(env.publicUrl, `${env.publicUrl}/verified`);
    try {
      const { status, verdict } = await fresh.verify(assertion!);
      assert.equal(status, 200, JSON.stringify(verdict));
      assert.equal(verdict.payload!.sub, 'split-user');
    } finally {
      await fresh.close();
    }
  } finally {
    await late.process.stop();
  }
});
