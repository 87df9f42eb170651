/**
 * One sign-in for every host (design.md §4.16), embedded and split (two proxy processes behind
 * one port, each request of a walk landing on either): a protected page on `app.localhost` sends
 * the browser to the sign-in origin, which signs in at the provider and hands the session back with
 * a one-time code; `*.apps.localhost` then signs in without the provider; logging out anywhere
 * ends every host; the code is single-use, bound to its host and browser, and short-lived; a host's
 * cookie is a session on that host only; no cookie ever names a parent domain.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { browserRequest } from '../support/browser-request.js';
import { eventually } from '../support/eventually.js';
import { decodeEntities, parseForms } from '../support/html-forms.js';
import { startHostSignInGateway, type HostSignInGateway } from '../support/host-sign-in-gateways.js';
import { rawRequest } from '../support/raw-connection.js';
import { RecordingCookieJar, cookieAttributes } from '../support/recording-cookie-jar.js';
import { headerValues, type Echo } from '../support/upstream.js';
import { account, assertRefusedCode, bindOf, CODE, echoOf, handOff, openSignedIn, signInAt } from './host-flows.js';

const USERS = {
  first: account('host-first'),
  second: account('host-second'),
  upstream: account('host-upstream'),
  hostLogout: account('host-logout'),
  getLogout: account('host-get-logout'),
  originLogout: account('origin-logout'),
  revoked: account('host-revoked'),
  backchannel: account('host-backchannel'),
  replay: account('host-replay'),
  otherHost: account('host-other-host'),
  otherBrowser: account('host-other-browser'),
  expired: account('host-expired'),
  ended: account('host-ended'),
  scoped: account('host-scoped'),
  csrf: account('host-csrf'),
  spellings: account('host-spellings'),
};

const JSON_ACCEPT = 'application/json';

for (const topology of ['embedded', 'split'] as const) {
  describe(`one sign-in for every host, ${topology}`, { timeout: 240_000 }, () => {
    let gw: HostSignInGateway;
    /** Every browser of this topology's tests, for the last test's look at every Set-Cookie. */
    const jars: RecordingCookieJar[] = [];
    const newJar = () => {
      const jar = new RecordingCookieJar();
      jars.push(jar);
      return jar;
    };
    const app = (path: string) => `${gw.hostOrigin('app.localhost')}${path}`;
    const wild = (path: string, label = 'x') => `${gw.hostOrigin(`${label}.apps.localhost`)}${path}`;
    const pub = (path: string) => `${gw.publicUrl}${path}`;

    before(async () => {
      gw = await startHostSignInGateway(topology, Object.values(USERS));
    });
    after(async () => {
      await gw?.close();
    });

    /** A browser signed in on app.localhost (and so at the sign-in origin) as `user`. */
    async function signedIn(user: (typeof USERS)[keyof typeof USERS]): Promise<RecordingCookieJar> {
      const jar = newJar();
      const { page } = await signInAt(jar, app('/start'), user);
      assert.equal(echoOf(page).url, '/app/start');
      return jar;
    }

    /** A browser signed in on app.localhost and x.apps.localhost as `user`. */
    async function signedInOnBoth(user: (typeof USERS)[keyof typeof USERS]): Promise<RecordingCookieJar> {
      const jar = await signedIn(user);
      assert.equal(echoOf((await openSignedIn(gw, jar, wild('/start'))).page).url, '/wild/start');
      return jar;
    }

    /** The status of a script's GET of `url` with the cookies of `jar` (or `cookie`). */
    async function statusFor(jar: RecordingCookieJar, url: string, cookie?: string): Promise<number> {
      return (await browserRequest(jar, url, { accept: JSON_ACCEPT, ...(cookie === undefined ? {} : { cookie }) })).status;
    }

    /** Waits until neither host nor the sign-in origin knows the browser holding `jar`. */
    async function signedOutEverywhere(jar: RecordingCookieJar): Promise<void> {
      const statuses = async () => [await statusFor(jar, app('/x')), await statusFor(jar, wild('/x')), await statusFor(jar, pub('/auth/profile'))];
      await eventually('signed out on both hosts and the sign-in origin', async () => (await statuses()).every((status) => status === 401), 10_000);
    }

    /** A CSRF token from `url`: a host's `/.gatehouse/csrf-token` or the sign-in origin's `/auth/csrf-token`. */
    async function csrfTokenAt(jar: RecordingCookieJar, url: string): Promise<string> {
      const answer = await browserRequest(jar, url, { accept: JSON_ACCEPT });
      assert.equal(answer.status, 200, answer.body);
      const { csrfToken } = JSON.parse(answer.body) as { csrfToken: string };
      assert.equal(typeof csrfToken, 'string');
      return csrfToken;
    }

    /** The sign-in origin's own logout: `POST /auth/logout` with its session's CSRF token (a 302). */
    async function logOutAtOrigin(jar: RecordingCookieJar): Promise<void> {
      const token = await csrfTokenAt(jar, pub('/auth/csrf-token'));
      const out = await browserRequest(jar, pub('/auth/logout'), { method: 'POST', initiator: pub('/'), headers: { 'x-csrf-token': token } });
      assert.equal(out.status, 302, out.body);
    }

    /** The audit log's actions for user `sub`, newest first. */
    async function auditedActions(sub: string): Promise<string[]> {
      const page = await gw.call('GET', '/dashboard/logs?limit=1000', { as: gw.admin });
      assert.equal(page.status, 200, page.text);
      return (page.json.logs as Array<{ action: string; user_id: string }>).filter((entry) => entry.user_id === sub).map((entry) => entry.action);
    }

    it('sends a page on a service host to the sign-in origin, and back to that page signed in after the provider', async () => {
      const jar = newJar();
      const asked = await browserRequest(jar, app('/page?x=1'));
      assert.equal(asked.status, 302, asked.body);
      const login = new URL(asked.location!);
      assert.equal(`${login.origin}${login.pathname}`, pub('/auth/login'));
      assert.equal(login.searchParams.get('rd'), app('/page?x=1'));
      const handoff = jar.get('gw_handoff', app('/'));
      assert.ok(handoff, 'gw_handoff set on the host');
      assert.equal(login.searchParams.get('bind'), bindOf(handoff));
      const handoffCookie = cookieAttributes(jar.fieldsFor('gw_handoff', 'app.localhost')[0]!);
      assert.deepEqual([handoffCookie.has('httponly'), handoffCookie.get('samesite')?.toLowerCase(), handoffCookie.get('path'), handoffCookie.get('max-age')], [true, 'lax', '/', '600']);

      const mark = gw.network.requests.length;
      const { callbackUrl, page } = await signInAt(jar, app('/page?x=1'), USERS.first);
      assert.ok(gw.network.requests.slice(mark).some((hop) => hop.includes(gw.idp.issuer)), 'signed in at the provider');
      assert.match(new URL(callbackUrl).searchParams.get('code') ?? '', CODE);
      const echoed = echoOf(page);
      assert.equal(echoed.url, '/app/page?x=1');
      assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), [USERS.first.sub]);

      const sessionFields = jar.fieldsFor('gw_session', 'app.localhost');
      assert.equal(sessionFields.length, 1, 'one host session cookie');
      const session = cookieAttributes(sessionFields[0]!);
      assert.deepEqual([session.has('httponly'), session.get('samesite')?.toLowerCase(), session.get('path')], [true, 'lax', '/']);
      const originSession = cookieAttributes(jar.fieldsFor('gw_session', new URL(gw.publicUrl).hostname).at(-1)!);
      const [hostAge, originAge] = [Number(session.get('max-age')), Number(originSession.get('max-age'))];
      assert.ok(hostAge > 0 && hostAge <= originAge && hostAge >= originAge - 60, `the host cookie lasts as long as the session: ${hostAge} s, ${originAge} s`);
      assert.equal(jar.get('gw_handoff', app('/')), undefined, 'the callback clears gw_handoff');
      const [onHost, atOrigin] = [jar.get('gw_session', app('/')), jar.get('gw_session', pub('/'))];
      assert.ok(onHost && atOrigin, 'a session cookie on the host and at the sign-in origin');
      assert.notEqual(onHost, atOrigin, 'the host holds a handle of its own, not the session id');
    });

    it('signs a second host in without the provider: one redirect round', async () => {
      const jar = await signedIn(USERS.second);
      const { hops, page } = await openSignedIn(gw, jar, wild('/next?y=2'));
      const paths = hops.map((hop) => hop.replace(/\?.*$/, ''));
      assert.deepEqual(paths, [`GET ${wild('/next')}`, `GET ${pub('/auth/login')}`, `GET ${wild('/.gatehouse/callback')}`]);
      assert.equal(hops.filter((hop) => hop.includes(gw.idp.issuer)).length, 0, 'no request to the provider');
      const echoed = echoOf(page);
      assert.equal(echoed.url, '/wild/next?y=2');
      assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), [USERS.second.sub]);
      const cookies = [jar.get('gw_session', app('/')), jar.get('gw_session', wild('/')), jar.get('gw_session', pub('/'))];
      assert.equal(new Set(cookies).size, 3, 'each host its own handle');
      await eventually('the sign-in audited', async () => (await auditedActions(USERS.second.sub)).includes('USER_LOGIN'));
      assert.deepEqual(await auditedActions(USERS.second.sub), ['USER_LOGIN'], 'one sign-in, the hand-offs not audited');
    });

    it("never shows the upstream the gateway's cookies or a hand-off code", async () => {
      const jar = await signedInOnBoth(USERS.upstream);
      jar.store('theme=dark; Path=/', app('/'));
      const echoed = echoOf(await browserRequest(jar, app('/cookies')));
      assert.deepEqual(headerValues(echoed, 'cookie'), ['theme=dark']);
      assert.ok(gw.upstream.requests.length > 0);
      for (const received of gw.upstream.requests) {
        assert.doesNotMatch(headerValues(received, 'cookie').join('; '), /gw_/, received.url);
        assert.doesNotMatch(received.url, /code=|gatehouse/i);
      }
    });

    it("logs out on the app host with its own CSRF token, which ends the sign-in origin's session and the other host's", async () => {
      const jar = await signedInOnBoth(USERS.hostLogout);
      const token = await csrfTokenAt(jar, app('/.gatehouse/csrf-token'));
      const originToken = await csrfTokenAt(jar, pub('/auth/csrf-token'));
      assert.notEqual(token, originToken, "the host session's token, not the sign-in origin's");
      const withOriginToken = await browserRequest(jar, app('/.gatehouse/logout'), { method: 'POST', accept: JSON_ACCEPT, headers: { 'x-csrf-token': originToken } });
      assert.equal(withOriginToken.status, 403, "the sign-in origin's token is not the host's");
      assert.equal(await statusFor(jar, app('/x')), 200, 'still signed in');

      const out = await browserRequest(jar, app('/.gatehouse/logout'), { method: 'POST', initiator: app('/page'), headers: { 'x-csrf-token': token } });
      assert.equal(out.status, 302, out.body);
      const next = new URL(out.location!);
      const toProvider = next.href.startsWith(gw.idp.issuer);
      assert.equal(toProvider ? next.searchParams.get('post_logout_redirect_uri') : next.href, pub('/'), out.location!);
      assert.equal(jar.get('gw_session', app('/')), undefined, 'the host cookie is cleared');
      await signedOutEverywhere(jar);
      await eventually('the logout audited', async () => (await auditedActions(USERS.hostLogout.sub)).includes('USER_LOGOUT'));
    });

    it('asks a link from another site to GET /.gatehouse/logout to confirm, and logs out a typed one', async () => {
      const jar = await signedInOnBoth(USERS.getLogout);
      const asked = await browserRequest(jar, app('/.gatehouse/logout'), { initiator: 'http://evil.example/', headers: { 'sec-fetch-site': 'cross-site' } });
      assert.equal(asked.status, 200, 'a page to confirm');
      assert.equal(await statusFor(jar, wild('/x')), 200, 'nothing ended yet');
      const form = parseForms(asked.body, app('/.gatehouse/logout')).find((candidate) => candidate.method === 'post');
      assert.equal(form?.action, app('/.gatehouse/logout'), "the confirm button posts to the host's logout");
      const confirmed = await browserRequest(jar, form.action, { initiator: app('/.gatehouse/logout'), form: Object.fromEntries(form.fields.map((field) => [field.name, field.value])) });
      assert.equal(confirmed.status, 302, confirmed.body);
      await signedOutEverywhere(jar);

      const again = await signedInOnBoth(USERS.getLogout);
      const typed = await browserRequest(again, wild('/.gatehouse/logout'), { headers: { 'sec-fetch-site': 'none' } });
      assert.equal(typed.status, 302, typed.body);
      await signedOutEverywhere(again);
    });

    it('logs out at the sign-in origin, which ends both hosts', async () => {
      const jar = await signedInOnBoth(USERS.originLogout);
      await logOutAtOrigin(jar);
      await signedOutEverywhere(jar);
    });

    it("ends the host sessions when an admin ends the user's session", async () => {
      const jar = await signedInOnBoth(USERS.revoked);
      const listed = await gw.call('GET', `/api/sessions?user=${encodeURIComponent(USERS.revoked.email)}`, { as: gw.admin });
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.json.total, 1, 'the host sessions are links to the one session, not sessions of their own');
      const ended = await gw.call('DELETE', `/api/sessions/${listed.json.sessions[0].id}`, { as: gw.admin });
      assert.equal(ended.status, 204, ended.text);
      await signedOutEverywhere(jar);
    });

    it("ends the host sessions at the provider's back-channel logout", async () => {
      const jar = await signedInOnBoth(USERS.backchannel);
      await gw.idp.backchannelLogout(USERS.backchannel.sub);
      await signedOutEverywhere(jar);
    });

    it('refuses a hand-off code used a second time: 400, no cookie', async () => {
      const jar = await signedIn(USERS.replay);
      const handed = await handOff(gw, jar, wild(''), '/replayed?y=2');
      const first = await browserRequest(jar, handed.callbackUrl, { initiator: pub('/auth/login') });
      assert.equal(first.status, 302, first.body);
      assert.equal(first.location, wild('/replayed?y=2'));
      assert.ok(jar.get('gw_session', wild('/')), 'the first use signs the host in');
      const again = await browserRequest(newJar(), handed.callbackUrl, { cookie: `gw_handoff=${handed.handoff}` });
      assertRefusedCode(again, 'a replayed code');
      const asJson = await browserRequest(newJar(), handed.callbackUrl, { accept: JSON_ACCEPT, cookie: `gw_handoff=${handed.handoff}` });
      assert.equal(asJson.status, 400);
      assert.deepEqual(JSON.parse(asJson.body), { error: 'Bad request' });
    });

    it("refuses a code on another host than its own, and that attempt uses it up", async () => {
      const jar = await signedIn(USERS.otherHost);
      const handed = await handOff(gw, jar, wild(''));
      for (const elsewhere of [wild('', 'y'), app('')]) {
        const callback = `${elsewhere}/.gatehouse/callback?code=${handed.code}`;
        assertRefusedCode(await browserRequest(newJar(), callback, { cookie: `gw_handoff=${handed.handoff}` }), `on ${elsewhere}`);
      }
      assertRefusedCode(await browserRequest(jar, handed.callbackUrl, { initiator: pub('/auth/login') }), 'on its own host afterwards');
      assert.equal(jar.get('gw_session', wild('/')), undefined);
    });

    it("refuses a code in a browser without the gw_handoff it is bound to, and that attempt uses it up", async () => {
      const jar = await signedIn(USERS.otherBrowser);
      const stolen = await handOff(gw, jar, wild(''));
      assertRefusedCode(await browserRequest(newJar(), stolen.callbackUrl, { initiator: pub('/auth/login') }), 'another browser');
      assertRefusedCode(await browserRequest(jar, stolen.callbackUrl, { initiator: pub('/auth/login') }), 'its browser afterwards');
      const handed = await handOff(gw, jar, wild(''));
      const wrong = await browserRequest(newJar(), handed.callbackUrl, { cookie: `gw_handoff=${handed.handoff.slice(1)}x` });
      assertRefusedCode(wrong, 'a gw_handoff of another value');
    });

    it('refuses a code after its 60 s', async () => {
      const jar = await signedIn(USERS.expired);
      const handed = await handOff(gw, jar, wild(''));
      const db = new Database(gw.databasePath);
      try {
        db.pragma('busy_timeout = 5000');
        // 1 is long past whether the column counts seconds or milliseconds.
        const { changes } = db.prepare('UPDATE host_handoff_codes SET expires_at = 1 WHERE expires_at > 1').run();
        assert.ok(changes >= 1, 'the code is stored in host_handoff_codes');
      } finally {
        db.close();
      }
      assertRefusedCode(await browserRequest(jar, handed.callbackUrl, { initiator: pub('/auth/login') }), 'an expired code');
      assert.equal(jar.get('gw_session', wild('/')), undefined);
    });

    it('refuses a code whose session ended before it was used', async () => {
      const jar = await signedIn(USERS.ended);
      const handed = await handOff(gw, jar, wild(''));
      await logOutAtOrigin(jar);
      await signedOutEverywhere(jar);
      assertRefusedCode(await browserRequest(jar, handed.callbackUrl, { initiator: pub('/auth/login') }), "an ended session's code");
    });

    it("takes a host's session cookie for a session on that host only", async () => {
      const jar = await signedIn(USERS.scoped);
      const handle = `gw_session=${jar.get('gw_session', app('/'))}`;
      const sessionId = `gw_session=${jar.get('gw_session', pub('/'))}`;
      assert.equal(await statusFor(jar, app('/x'), handle), 200);
      assert.equal(await statusFor(jar, pub('/plain/x'), sessionId), 200, 'the path service with the sign-in origin session');
      assert.equal(await statusFor(jar, wild('/x'), handle), 401, 'on another host');
      assert.equal(await statusFor(jar, pub('/auth/profile'), handle), 401, 'at the sign-in origin');
      assert.equal(await statusFor(jar, pub('/plain/x'), handle), 401, "on the sign-in origin's path service");
      assert.equal(await statusFor(jar, app('/x'), sessionId), 401, "the sign-in origin's session id on a host");
    });

    it('refuses a host logout without its CSRF token (403, the session lives) and takes it as the form field _csrf', async () => {
      const jar = await signedInOnBoth(USERS.csrf);
      for (const form of [undefined, { _csrf: 'not-the-token' }]) {
        const refused = await browserRequest(jar, wild('/.gatehouse/logout'), { method: 'POST', accept: JSON_ACCEPT, ...(form ? { form } : {}) });
        assert.equal(refused.status, 403, refused.body);
        assert.deepEqual(JSON.parse(refused.body), { error: 'Invalid CSRF token' });
      }
      assert.deepEqual([await statusFor(jar, wild('/x')), await statusFor(jar, app('/x')), await statusFor(jar, pub('/auth/profile'))], [200, 200, 200]);
      const out = await browserRequest(jar, wild('/.gatehouse/logout'), { form: { _csrf: await csrfTokenAt(jar, wild('/.gatehouse/csrf-token')) } });
      assert.equal(out.status, 302, out.body);
      await signedOutEverywhere(jar);
    });

    it('answers API calls without a session 401 JSON, and keeps the reserved paths', async () => {
      const jar = newJar();
      for (const url of [app('/api/items'), wild('/api/items')]) {
        const answer = await browserRequest(jar, url, { accept: JSON_ACCEPT });
        assert.equal(answer.status, 401, url);
        assert.deepEqual(JSON.parse(answer.body), { error: 'Not authenticated' });
        assert.equal(answer.headers.location, undefined);
        const posted = await browserRequest(jar, url, { method: 'POST', form: { a: '1' } });
        assert.equal(posted.status, 401, `an HTML-accepting POST to ${url}`);
        const link = /href="([^"]*\/\.gatehouse\/login\?[^"]*)"/.exec(posted.body)?.[1];
        assert.ok(link, `the sign-in page links to the host's /.gatehouse/login: ${posted.body.slice(-400)}`);
        const signInLink = new URL(decodeEntities(link), url);
        assert.equal(signInLink.origin, new URL(url).origin);
        assert.equal(signInLink.searchParams.get('rd'), '/api/items');
        const followed = await browserRequest(jar, signInLink.href, { initiator: url });
        assert.equal(followed.status, 302);
        assert.equal(new URL(followed.location!).searchParams.get('rd'), url);
      }
      const login = await browserRequest(jar, app(`/.gatehouse/login?rd=${encodeURIComponent('/next?a=1')}`));
      assert.equal(login.status, 302);
      assert.equal(new URL(login.location!).searchParams.get('rd'), app('/next?a=1'));
      assert.equal((await browserRequest(jar, app('/.gatehouse/csrf-token'), { accept: JSON_ACCEPT })).status, 401);
      assert.equal((await browserRequest(jar, app('/.gatehouse/other'), { accept: JSON_ACCEPT })).status, 404);
      for (const url of [pub('/.gatehouse/callback?code=x'), `${gw.hostOrigin('nowhere.localhost')}/.gatehouse/callback?code=x`]) {
        const answer = await browserRequest(jar, url, { accept: JSON_ACCEPT });
        assert.deepEqual([answer.status, JSON.parse(answer.body)], [404, { error: 'Service not found' }], `${url}: not a service host`);
      }
      assert.equal((await browserRequest(jar, app('/page'), { method: 'HEAD' })).status, 302, 'a HEAD navigation is sent to sign in too');
    });

    it('serves a host session on every spelling of its Host, and refuses two Host fields and absolute-form', async () => {
      const jar = await signedIn(USERS.spellings);
      const cookie = `Cookie: gw_session=${jar.get('gw_session', app('/'))}`;
      const send = (port: number, lines: string[]) => rawRequest(port, [...lines, cookie, 'Accept: application/json', 'Connection: close', '', ''].join('\r\n'));
      const forwarded = gw.upstream.requests.length;
      for (const port of gw.listenerPorts) {
        for (const host of ['APP.LOCALHOST', 'app.localhost.', `app.localhost:${gw.port}`, 'app.localhost']) {
          const answer = await send(port, ['GET /spelled HTTP/1.1', `Host: ${host}`]);
          assert.equal(answer.status, 200, `${host} on ${port}: ${answer.body}`);
          const echoed = JSON.parse(answer.body) as Echo;
          assert.deepEqual([echoed.url, headerValues(echoed, 'x-forwarded-user')], ['/app/spelled', [USERS.spellings.sub]], host);
        }
        assert.equal((await send(port, ['GET /x HTTP/1.1', 'Host: app.localhost', 'Host: x.apps.localhost'])).status, 400, 'two Host fields');
        assert.equal((await send(port, [`GET http://x.apps.localhost:${gw.port}/x HTTP/1.1`, 'Host: app.localhost'])).status, 400, 'absolute-form');
      }
      assert.equal(gw.upstream.requests.length, forwarded + 4 * gw.listenerPorts.length, 'the refused ones reached no upstream');
    });

    it('never set a cookie with a Domain attribute, nor one a browser keeps for more than its host', async () => {
      const received = jars.flatMap((jar) => jar.received).filter((r) => new URL(r.url).port === String(gw.port));
      assert.ok(received.some((r) => new URL(r.url).hostname.endsWith('.localhost')), 'cookies came from service hosts');
      for (const { url, field } of received) assert.equal(cookieAttributes(field).has('domain'), false, `${url}: ${field}`);
      for (const jar of jars) assert.deepEqual(jar.all().filter((cookie) => !cookie.hostOnly), []);
    });
  });
}
