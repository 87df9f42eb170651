/**
 * Step-up (design.md §4.18) through `GET /auth/verify` (design.md §4.19): a session short of a
 * service's `maxAge` or `acr` gets 401 with `Location` the step-up sign-in that returns to the
 * original request (PUBLIC_URL's, or a service host's own `/.gatehouse/login`, which carries the
 * requirement on to the sign-in origin), as a missing session does; one that meets it, 200.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import type { SessionUser } from '../../shared/types.js';
import { createService } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { rawRequest } from '../support/raw-connection.js';
import { sampleSession } from '../support/samples.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const HOST = 'app.example.test';
const HOUR_MS = 3_600_000;

describe('step-up through GET /auth/verify', () => {
  let gw: TestGateway;
  let upstream: EchoUpstream;

  before(async () => {
    upstream = await startEchoUpstream();
    gw = await startTestGateway({ TRUST_PROXY: '127.0.0.1' });
    const admin = await signIn(gw);
    await createService(gw.adminUrl, admin, { name: 'Stepped', path: '/stepped', targetUrl: upstream.origin, maxAge: 300, acr: ['mfa'] });
    await createService(gw.adminUrl, admin, { name: 'Hosted', path: '/', hosts: [HOST], targetUrl: upstream.origin, maxAge: 300 });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  /** A session of a user signed in as `signIn` says; with `host`, the Cookie of its host session there. */
  async function cookieFor(signInFacts: Partial<SessionUser>, host?: string): Promise<string> {
    const session = sampleSession({ user: { sub: 'stepper', name: 'S', email: '', isAdmin: false, ...signInFacts } });
    const id = await gw.gateway.sessions.create(session);
    const value = host === undefined ? id : await gw.gateway.sessions.link(session.handle, host, session.csrfToken);
    return `${gatewayCookieNames(gw.gateway.config.publicUrl).session}=${value}`;
  }

  /** The verify endpoint's answer about `uri` (on `host` when given) for `cookie`: status, Location, body. */
  async function verdict(uri: string, cookie: string, host?: string) {
    const response = await request(`${gw.origin}/auth/verify`, { headers: { 'x-forwarded-uri': uri, cookie, ...(host ? { 'x-forwarded-host': host } : {}) } });
    return { status: response.statusCode, location: response.headers.location, body: await response.body.json().catch(() => undefined) };
  }

  it('a session meeting maxAge and acr: 200; one too old, of another acr or from before step-up: 401 with the step-up sign-in', async () => {
    const fresh = await cookieFor({ authTime: Date.now(), acr: 'mfa' });
    assert.equal((await verdict('/stepped/page', fresh)).status, 200);
    const stepUpLogin = `${gw.origin}/auth/login?returnTo=${encodeURIComponent('/stepped/page?q=1')}&max_age=300&acr_values=mfa`;
    for (const facts of [{ authTime: Date.now() - HOUR_MS, acr: 'mfa' }, { authTime: Date.now(), acr: 'pwd' }, {}]) {
      const answer = await verdict('/stepped/page?q=1', await cookieFor(facts));
      assert.deepEqual(answer, { status: 401, location: stepUpLogin, body: { error: 'Step-up sign-in required' } }, JSON.stringify(facts));
    }
  });

  it("on a service host: the host's own sign-in path, which carries the requirement on to the sign-in origin", async () => {
    const port = new URL(gw.origin).port;
    const old = await cookieFor({ authTime: Date.now() - HOUR_MS }, HOST);
    const answer = await verdict('/page', old, HOST);
    assert.equal(answer.status, 401);
    assert.equal(answer.location, `http://${HOST}:${port}/.gatehouse/login?rd=%2Fpage&max_age=300`);
    const hop = await rawRequest(Number(port), [`GET /.gatehouse/login?rd=%2Fpage&max_age=300 HTTP/1.1`, `Host: ${HOST}`, 'Connection: close', '', ''].join('\r\n'));
    assert.equal(hop.status, 302);
    const login = new URL(hop.headers.find(([name]) => name === 'location')![1]!);
    assert.deepEqual([login.pathname, login.searchParams.get('rd'), login.searchParams.get('max_age')], ['/auth/login', `http://${HOST}:${port}/page`, '300']);
    const recent = await cookieFor({ authTime: Date.now() }, HOST);
    assert.equal((await verdict('/page', recent, HOST)).status, 200);
  });
});
