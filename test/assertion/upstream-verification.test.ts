/**
 * The identity assertion as an upstream sees it (design.md §4.7, README "Identity assertion"):
 * real upstream processes verify it with exactly the README's lines against the embedded
 * gateway's `/.well-known/jwks.json`, through a rotation and past the old key's grace.
 * ASSERTION_TTL is 5 s here, so the retired key's grace is 10 s (twice a TTL under a minute).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import type { SignedIn } from '../support/sessions.js';
import { startVerifyingUpstream, type Verdict, type VerifyingUpstream } from '../support/verifying-upstream.js';

const upstreams: VerifyingUpstream[] = [];
// Registered first, so it runs first: the upstreams stop while the gateway still runs.
after(() => Promise.all(upstreams.map((upstream) => upstream.close())));
let user: SignedIn;

const env = useAdminSession({ env: { ASSERTION_TTL: '5s' } }, async (env) => {
  user = await env.signIn({ sub: 'ada', name: 'Ada', email: 'ada@example.com', isAdmin: false, groups: ['staff'] });
});

/** A new verifying upstream process for the service at `path`: it knows no key yet. */
async function newUpstream(path = '/verified'): Promise<VerifyingUpstream> {
  const upstream = await startVerifyingUpstream(env.gw.origin, `${env.gw.origin}${path}`);
  upstreams.push(upstream);
  return upstream;
}

/** What the upstream answered to the user's request through the gateway. */
async function throughGateway(): Promise<{ status: number; verdict: Verdict }> {
  const response = await request(`${env.gw.origin}/verified/page`, { headers: { cookie: user.cookie } });
  return { status: response.statusCode, verdict: (await response.body.json()) as Verdict };
}

async function publishedKids(): Promise<string[]> {
  const response = await request(`${env.gw.origin}/.well-known/jwks.json`);
  return ((await response.body.json()) as JSONWebKeySet).keys.map((key) => key.kid!);
}

test('a real upstream accepts the assertion; after a rotation the new key signs, the old assertion holds until the grace ends, then no verifier accepts it', async () => {
  const call = apiClient(env.gw.origin);
  const first = await newUpstream();
  const created = await call('POST', '/api/services', { as: env.admin, json: { name: 'Verified', path: '/verified', targetUrl: first.origin, requireAuth: true } });
  assert.equal(created.status, 201, created.text);

  const accepted = await throughGateway();
  assert.equal(accepted.status, 200, JSON.stringify(accepted.verdict));
  const { payload, assertion: old } = accepted.verdict;
  const oldKid = accepted.verdict.kid!;
  assert.deepEqual(
    { iss: payload!.iss, aud: payload!.aud, sub: payload!.sub, email: payload!.email, groups: payload!.groups },
    { iss: env.gw.origin, aud: `${env.gw.origin}/verified`, sub: 'ada', email: 'ada@example.com', groups: ['staff'] },
  );

  const rotated = await call('POST', '/api/assertion-keys/rotate', { as: env.admin });
  assert.equal(rotated.status, 200, rotated.text);
  assert.equal(rotated.json.previousKid, oldKid);
  const newKid: string = rotated.json.kid;
  assert.deepEqual(await publishedKids(), [newKid, oldKid]);
  assert.equal((await first.verify(old!)).status, 200, 'the running upstream still accepts the old assertion');

  // A new instance of the upstream, which fetches the key set after the rotation.
  const second = await newUpstream();
  const moved = await call('PUT', `/api/services/${created.json.id}`, { as: env.admin, json: { targetUrl: second.origin } });
  assert.equal(moved.status, 200, moved.text);
  const afterRotation = await throughGateway();
  assert.equal(afterRotation.status, 200, JSON.stringify(afterRotation.verdict));
  assert.equal(afterRotation.verdict.kid, newKid, 'the new key signs');
  assert.equal(decodeProtectedHeader(afterRotation.verdict.assertion!).kid, newKid);
  assert.equal((await second.verify(old!)).status, 200, 'the old key is still published: its assertions still verify');

  const waited = await eventually('the old key to leave the JWKS', async () => !(await publishedKids()).includes(oldKid), 20_000, 100);
  assert.ok(waited > 5_000, `the old key stayed published past ASSERTION_TTL (it left after ${waited} ms)`);
  assert.deepEqual(await publishedKids(), [newKid]);
  const third = await newUpstream();
  const rejected = await third.verify(old!);
  assert.equal(rejected.status, 401);
  assert.equal(rejected.verdict.error, 'ERR_JWKS_NO_MATCHING_KEY', 'refused for its key, which is gone, before its expiry is even read');
  const current = await throughGateway();
  assert.equal((await third.verify(current.verdict.assertion!)).status, 200, 'the current key is published');
});

test('a client-sent assertion never reaches the upstream: it sees the gateway\'s, or none', async () => {
  const upstream = await newUpstream('/open');
  const created = await apiClient(env.gw.origin)('POST', '/api/services', { as: env.admin, json: { name: 'Open', path: '/open', targetUrl: upstream.origin, requireAuth: false } });
  assert.equal(created.status, 201, created.text);
  const forged = (await throughGateway()).verdict.assertion!; // a real assertion, for another service
  const anonymous = await request(`${env.gw.origin}/open/x`, { headers: { 'x-gatehouse-assertion': forged, x_gatehouse_assertion: forged } });
  assert.equal(anonymous.statusCode, 401);
  const verdict = (await anonymous.body.json()) as Verdict;
  assert.equal(verdict.assertion, undefined, 'removed, not passed on');
  const signedIn = await request(`${env.gw.origin}/open/x`, { headers: { cookie: user.cookie, 'x-gatehouse-assertion': forged } });
  const own = (await signedIn.body.json()) as Verdict;
  assert.equal(signedIn.statusCode, 200, JSON.stringify(own));
  assert.notEqual(own.assertion, forged);
  assert.equal(own.payload!.aud, `${env.gw.origin}/open`);
});
