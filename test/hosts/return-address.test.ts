/**
 * Return addresses of the sign-in origin (design.md §4.16 "Return addresses"): `rd` of
 * `/auth/login` is taken only when, parsed as a WHATWG URL, it names PUBLIC_URL's host or a
 * registered service host with PUBLIC_URL's scheme and port and no userinfo, and its raw text has
 * no backslash, control character or whitespace and at most 2,048 characters. Every other
 * spelling (open redirects: userinfo, backslashes, `//`, encoded dots, IDN homographs, other
 * schemes and ports) is refused with 400 and sends the browser nowhere, signed in or not; the
 * spellings taken are sent on re-serialised, under the registered name. ADMIN_URL's host is taken
 * on ADMIN_URL's scheme and port.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { browse } from '../support/browserless-login.js';
import { browserRequest, type BrowserResponse } from '../support/browser-request.js';
import { startHostSignInGateway, type HostSignInGateway } from '../support/host-sign-in-gateways.js';
import { RecordingCookieJar } from '../support/recording-cookie-jar.js';
import { account, bindOf, CODE, signInAt } from './host-flows.js';

const USER = account('return-address');
/** Any well-formed bind: the refusals come before it is looked at. */
const BIND = bindOf('a-gw_handoff-value');

/** The open-redirect spellings of the spec and more, for PUBLIC_URL port `port`. */
function refusedSpellings(port: number): string[] {
  const app = `app.localhost:${port}`;
  return [
    'https://evil.example/',
    '//evil.example/',
    '/\\evil.example',
    `http://${app}@evil.example/`,
    `http://evil.example\\@${app}/`,
    `http://user@${app}/`,
    `http://user:pass@${app}/`,
    `http://app.localhost.evil.example:${port}/`,
    `http://evil.example%2eapp.localhost:${port}/`,
    `http://\u0430pp.localhost:${port}/`, // Cyrillic а: an xn-- A-label, not registered
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    `http://app.localhost:${port + 1}/`,
    `http://app.localhost/`,
    `https://${app}/`,
    `http://apps.localhost:${port}/`,
    `http://a.b.apps.localhost:${port}/`,
    `http://127.0.0.1:${port}/`,
    `http://elsewhere.localhost:${port}/`,
    `http:\\\\evil.example/`,
    `http://${app}/a\tb`,
    `http://${app}/a\nb`,
    ` http://${app}/`,
    `http://${app}/a b`,
    `http://${app}/\u0000`,
    `http://${app}/${'a'.repeat(2048)}`,
    '/x',
  ];
}

describe('return addresses of the sign-in origin', { timeout: 120_000 }, () => {
  let gw: HostSignInGateway;
  let signedIn: RecordingCookieJar;
  const app = (path: string) => `${gw.hostOrigin('app.localhost')}${path}`;
  const login = (rd: string, bind: string | null = BIND) =>
    `${gw.publicUrl}/auth/login?rd=${encodeURIComponent(rd)}${bind === null ? '' : `&bind=${bind}`}`;

  before(async () => {
    gw = await startHostSignInGateway('embedded', [USER], { adminOrigin: true });
    signedIn = new RecordingCookieJar();
    await signInAt(signedIn, app('/'), USER);
  });
  after(async () => {
    await gw?.close();
  });

  /** How many hand-off codes the admin's SQLite holds. */
  function codesStored(): number {
    const db = new Database(gw.databasePath, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM host_handoff_codes').get() as { n: number }).n;
    } finally {
      db.close();
    }
  }

  /** Asserts a refusal that sends the browser nowhere and sets nothing. */
  function assertRefused(answer: BrowserResponse, what: string): void {
    assert.equal(answer.status, 400, `${what}: ${answer.body.slice(0, 200)}`);
    assert.equal(answer.headers.location, undefined, what);
    assert.deepEqual(answer.setCookies, [], what);
  }

  it('refuses every open-redirect spelling with 400, signed in or not, and mints no code', async () => {
    const codes = codesStored();
    for (const rd of refusedSpellings(gw.port)) {
      const what = JSON.stringify(rd);
      assertRefused(await browserRequest(new RecordingCookieJar(), login(rd)), `${what} signed out`);
      assertRefused(await browserRequest(signedIn, login(rd), { initiator: app('/') }), `${what} signed in`);
      const asJson = await browserRequest(new RecordingCookieJar(), login(rd), { accept: 'application/json' });
      assert.deepEqual([asJson.status, JSON.parse(asJson.body)], [400, { error: 'Bad request' }], what);
    }
    assert.equal(codesStored(), codes, 'no code minted');
  });

  it('refuses a service host without bind', async () => {
    assertRefused(await browserRequest(signedIn, login(app('/x'), null), { initiator: app('/') }), 'signed in');
    assertRefused(await browserRequest(new RecordingCookieJar(), login(app('/x'), null)), 'signed out');
  });

  it('sends the spellings it takes to the registered name, re-serialised', async () => {
    const port = gw.port;
    const taken: Array<[string, string, string]> = [
      [`http://APP.localhost:${port}/x`, 'app.localhost', '/x'],
      [`HTTP://App.LocalHost:${port}/x?q=1`, 'app.localhost', '/x?q=1'],
      [`http://X.Apps.Localhost:${port}/`, 'x.apps.localhost', '/'],
      [`http://app.localhost:${port}/a/../b/./c`, 'app.localhost', '/b/c'],
      [`http://app.localhost:${port}/%2e%2e/d`, 'app.localhost', '/d'],
      [`http://app.localhost:${port}/${'a'.repeat(2000)}`, 'app.localhost', `/${'a'.repeat(2000)}`],
    ];
    for (const [rd, host, path] of taken) {
      // a gw_handoff on that host and its bind, as the host's own redirect to sign in sets them
      const handoff = randomBytes(32).toString('base64url');
      signedIn.store(`gw_handoff=${handoff}; Path=/; HttpOnly; SameSite=Lax`, `http://${host}:${port}/`);
      const answer = await browserRequest(signedIn, login(rd, bindOf(handoff)), { initiator: `http://${host}:${port}/` });
      assert.equal(answer.status, 302, `${rd}: ${answer.body.slice(0, 200)}`);
      const callback = new URL(answer.location!);
      assert.equal(callback.host, `${host}:${port}`, rd);
      assert.equal(callback.pathname, '/.gatehouse/callback', rd);
      assert.match(callback.searchParams.get('code') ?? '', CODE);
      const back = await browserRequest(signedIn, callback.href, { initiator: `${gw.publicUrl}/auth/login` });
      assert.equal(back.status, 302, `${rd}: ${back.body.slice(0, 200)}`);
      assert.equal(back.location, `http://${host}:${port}${path}`, rd);
    }
  });

  it("takes PUBLIC_URL's own host as the path to return to after the provider", async () => {
    const jar = new RecordingCookieJar();
    const walked = await browse(login(`${gw.publicUrl}/back?y=1`, null), jar, { email: USER.email, password: USER.password }, gw.publicUrl);
    assert.equal(walked.status, 302, walked.body.slice(0, 200));
    assert.equal(new URL(walked.finalLocation!, walked.url).href, `${gw.publicUrl}/back?y=1`);
  });

  it("sends the browser to ADMIN_URL after the provider, on ADMIN_URL's own scheme and port only", async () => {
    const admin = new URL(gw.adminUrl!);
    for (const rd of [`http://admin.localhost:${gw.port}/dashboard`, `https://${admin.host}/dashboard`, `http://x.${admin.host}/`, `http://${admin.host}@evil.example/`]) {
      assertRefused(await browserRequest(new RecordingCookieJar(), login(rd, null)), rd);
    }
    const jar = new RecordingCookieJar();
    const walked = await browse(login(`http://ADMIN.localhost:${admin.port}/dashboard?x=1`, null), jar, { email: USER.email, password: USER.password }, gw.publicUrl);
    assert.equal(walked.status, 302, walked.body.slice(0, 200));
    assert.equal(walked.url.startsWith(`${gw.publicUrl}/auth/callback`), true, walked.url);
    assert.equal(walked.finalLocation, `${gw.adminUrl}/dashboard?x=1`);
  });

  it("takes a service host's own /.gatehouse/login?rd= as a path on that host, / when it is not a safe one", async () => {
    const cases: Array<[string, string]> = [
      ['/next?a=1', '/next?a=1'],
      ['//evil.example/', '/'],
      ['/\\evil.example', '/'],
      ['https://evil.example/', '/'],
      [`http://x.apps.localhost:${gw.port}/`, '/'],
      ['javascript:alert(1)', '/'],
    ];
    for (const [rd, path] of cases) {
      const answer = await browserRequest(new RecordingCookieJar(), app(`/.gatehouse/login?rd=${encodeURIComponent(rd)}`));
      assert.equal(answer.status, 302, rd);
      const next = new URL(answer.location!);
      assert.equal(`${next.origin}${next.pathname}`, `${gw.publicUrl}/auth/login`, rd);
      assert.equal(next.searchParams.get('rd'), app(path), rd);
    }
  });

  it("sends a page whose address is too long to return to back to its host's root, which the sign-in origin takes", async () => {
    const jar = new RecordingCookieJar();
    const answer = await browserRequest(jar, app(`/search?q=${'x'.repeat(2100)}`));
    assert.equal(answer.status, 302);
    const login = new URL(answer.location!);
    assert.equal(login.searchParams.get('rd'), app('/'));
    const started = await browserRequest(jar, login.href);
    assert.equal(started.status, 302, 'the sign-in origin takes it (on to the provider)');
  });
});
