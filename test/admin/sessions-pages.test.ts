import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog } from '../../admin/audit-log.js';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import type { Session, SessionUser } from '../../shared/types.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { decodeEntities, parseForms } from '../support/html-forms.js';
import { sampleSession } from '../support/samples.js';
import type { SignedIn } from '../support/sessions.js';

/**
 * The sessions' pages over HTTP: the console's Sessions page (`/dashboard/sessions`, admins; its
 * changes go through the sessions API) and `/auth/sessions`, where each user sees and ends their
 * own sessions with forms; who may do what, CSRF, and the audit entries.
 */

const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const FIREFOX_UA = 'Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0';
const SAFARI_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

let member: SignedIn;

/** A client signed in as `user` from a browser: a session made in the store with this `User-Agent`, address and creation time. */
async function browserOf(gateway: TestGateway, user: Partial<SessionUser>, fields: Partial<Session> = {}, origin: 'public' | 'admin' = 'public'): Promise<SignedIn & { handle: string }> {
  const fullUser: SessionUser = { sub: 'x-sub', name: 'X', email: 'x@example.com', isAdmin: false, ...user };
  const session = sampleSession({
    user: fullUser,
    idToken: null,
    expiresAt: Date.now() + gateway.gateway.config.sessionTtlMs,
    ...(origin === 'admin' ? { scope: 'admin' as const } : {}),
    ...fields,
  });
  const id = await gateway.gateway.sessions.create(session);
  const { publicUrl, adminUrl } = gateway.gateway.config;
  const names = origin === 'admin' ? gatewayCookieNames(adminUrl!, 'admin') : gatewayCookieNames(publicUrl);
  return { cookie: `${names.session}=${id}`, csrfToken: session.csrfToken, user: fullUser, handle: session.handle };
}

/** Whether `who`'s cookie still opens a session. */
async function signedIn(who: SignedIn, base = env.gw.origin): Promise<boolean> {
  const status = (await apiClient(base)('GET', '/auth/profile', { as: who })).status;
  assert.ok(status === 200 || status === 401, `profile answered ${status}`);
  return status === 200;
}

/** Posts an HTML form the way a browser does (no X-CSRF-Token header). */
function postForm(path: string, who: SignedIn | undefined, fields: Record<string, string>, base = env.gw.origin): Promise<ApiResponse> {
  return apiClient(base)('POST', path, {
    ...(who ? { as: who } : {}),
    csrf: null,
    body: new URLSearchParams(fields).toString(),
    contentType: 'application/x-www-form-urlencoded',
    headers: { accept: 'text/html' },
  });
}

/** The newest audit entries (`GET /dashboard/logs`), details parsed. */
async function auditEntries(limit = 20): Promise<Array<{ action: string; user_id: string | null; details: Record<string, unknown> }>> {
  const response = await env.call('GET', `/dashboard/logs?limit=${limit}`, { as: env.admin });
  assert.equal(response.status, 200, response.text);
  return response.json.logs.map((log: { action: string; user_id: string | null; details: string }) => ({ ...log, details: JSON.parse(log.details) }));
}

/** The rows of the console's sessions table. */
const tableRows = (page: string): string[] => page.match(/<tr>\s*<th scope="row" data-label="User"[\s\S]*?<\/tr>/g) ?? [];

const env = useAdminSession({ admin: { name: 'Ada Admin' } }, async (env) => {
  member = await env.signIn({ sub: 'member-sub', name: 'Max Member', email: 'max@example.com', isAdmin: false });
});

describe('the console’s Sessions page', () => {
  it('anonymous: to the login page, coming back; a non-admin: the 403 page', async () => {
    const anonymous = await env.call('GET', '/dashboard/sessions?user=max%40example.com');
    assert.equal(anonymous.status, 302);
    assert.equal(anonymous.headers.location, `/auth/login-page?returnTo=${encodeURIComponent('/dashboard/sessions?user=max%40example.com')}`);
    const forbidden = await env.call('GET', '/dashboard/sessions', { as: member });
    assert.equal(forbidden.status, 403);
    assert.match(String(forbidden.headers['content-type']), /^text\/html/);
    assert.match(forbidden.text, /this account is not an administrator/);
  });

  it('lists everyone’s sessions newest first, with who, when, where from and which browser; in the navigation', async () => {
    const older = await browserOf(env.gw, { sub: 'list-sub', name: 'Lee List', email: 'lee@example.com' }, { userAgent: CHROME_UA, ipAddress: '203.0.113.7', createdAt: Date.now() - 3_600_000 });
    const newer = await browserOf(env.gw, { sub: 'list-sub', name: 'Lee List', email: 'lee@example.com' }, { userAgent: FIREFOX_UA, ipAddress: '198.51.100.2' });
    const page = await env.call('GET', '/dashboard/sessions', { as: env.admin });
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/dashboard\/sessions" aria-current="page">Sessions<\/a>/);
    assert.match(page.text, new RegExp(`<meta name="csrf-token" content="${env.admin.csrfToken}">`));
    assert.doesNotMatch(page.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const rows = tableRows(page.text);
    const index = (handle: string) => rows.findIndex((row) => row.includes(`data-id="${handle}"`));
    assert.ok(index(newer.handle) >= 0 && index(older.handle) > index(newer.handle), 'newest first');
    const row = rows[index(older.handle)]!;
    assert.match(row, /<a href="\/dashboard\/sessions\?user=list-sub"[^>]*>Lee List<\/a><br>lee@example\.com<br><code class="muted">list-sub<\/code>/);
    assert.match(row, /<code>203\.0\.113\.7<\/code>/);
    assert.match(row, new RegExp(`<span title="${CHROME_UA.replace(/[.()]/g, '\\$&')}">Chrome 126 on Windows</span>`));
    assert.match(row, /data-label="Signed in"><time datetime="[^"]+Z"/);
    assert.match(row, /data-label="Last seen"><time/);
    assert.match(row, /data-label="Expires"><time/);
    assert.match(rows[index(newer.handle)]!, />Firefox 127 on Android</);
    // The admin's own session: marked, with no Revoke button (the header's Sign out ends it).
    assert.ok(rows.some((r) => r.includes('admin-sub') && r.includes('This browser') && !r.includes('data-revoke-session')));
    // Never a session's secrets.
    for (const secret of [member.csrfToken, older.csrfToken, env.admin.cookie.split('=')[1]!, member.cookie.split('=')[1]!]) {
      assert.ok(!page.text.includes(secret), 'no cookie value or another session’s CSRF token');
    }
    assert.match(page.text, /Everyone’s sessions <span class="muted">\(\d+\)<\/span>/);
    assert.doesNotMatch(page.text, /data-sign-out-user/, 'sign out everywhere is offered for a searched user');
  });

  it('searches by email (any case) and by subject; a search without result says so; bad input is a 400 page', async () => {
    const a = await browserOf(env.gw, { sub: 'search-sub', name: 'Sam Search', email: 'sam@example.com' }, { userAgent: SAFARI_UA });
    const b = await browserOf(env.gw, { sub: 'search-sub', name: 'Sam Search', email: 'sam@example.com' });
    for (const query of ['SAM%40example.com', 'search-sub', '%20search-sub%20']) {
      const page = await env.call('GET', `/dashboard/sessions?user=${query}`, { as: env.admin });
      assert.equal(page.status, 200, query);
      const rows = tableRows(page.text);
      assert.equal(rows.length, 2, query);
      assert.ok(rows.every((row) => row.includes('search-sub')));
      assert.ok(rows[0]!.includes(b.handle) && rows[1]!.includes(a.handle));
      assert.match(page.text, /Safari 17 on iOS/);
      assert.match(page.text, /<input id="s-user" name="user" type="search" value="[^"]+"/);
      assert.match(page.text, /data-sign-out-user data-sub="search-sub" data-user="sam@example\.com"/);
      assert.match(page.text, /<a class="button secondary" href="\/dashboard\/sessions">Everyone<\/a>/);
    }
    const none = await env.call('GET', '/dashboard/sessions?user=nobody%40example.com', { as: env.admin });
    assert.equal(none.status, 200);
    assert.match(none.text, /nobody@example\.com has no live session/);
    const empty = await env.call('GET', '/dashboard/sessions?user=', { as: env.admin });
    assert.equal(empty.status, 200);
    assert.match(empty.text, /Everyone’s sessions/);
    const tooLong = await env.call('GET', `/dashboard/sessions?user=${'x'.repeat(321)}`, { as: env.admin });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.text, /role="alert">user must be an email or a subject of at most 320 characters/);
    const badOffset = await env.call('GET', '/dashboard/sessions?offset=-1', { as: env.admin });
    assert.equal(badOffset.status, 400);
    assert.match(badOffset.text, /offset must be an integer of 0 or more/);
  });

  it('pages like the audit log, keeping the search', async () => {
    const sessions = [];
    for (let i = 0; i < 52; i++) sessions.push(await browserOf(env.gw, { sub: 'many-sub', email: 'many@example.com' }, { createdAt: Date.now() - i * 1000 }));
    const first = await env.call('GET', '/dashboard/sessions?user=many-sub', { as: env.admin });
    assert.equal(tableRows(first.text).length, 50);
    assert.match(first.text, /Showing 1–50 of 52/);
    assert.match(first.text, /<a class="button secondary" href="\/dashboard\/sessions\?user=many-sub&amp;offset=50" rel="next">Older →<\/a>/);
    const second = await env.call('GET', '/dashboard/sessions?user=many-sub&offset=50', { as: env.admin });
    assert.deepEqual(
      tableRows(second.text).map((row) => /data-id="([^"]+)"/.exec(row)![1]),
      sessions.slice(50).map((s) => s.handle),
    );
    assert.match(second.text, /Showing 51–52 of 52/);
    assert.doesNotMatch(second.text, /data-live="sessions"/, 'an older page does not refresh itself');
    assert.equal((await env.call('DELETE', '/api/users/many-sub/sessions', { as: env.admin })).json.revoked, 52);
  });

  it('Revoke (the sessions API, with the CSRF token): that session’s cookie gets 401 at once, the others stay; audited', async () => {
    const phone = await browserOf(env.gw, { sub: 'rev-sub', email: 'rev@example.com' }, { userAgent: SAFARI_UA });
    const laptop = await browserOf(env.gw, { sub: 'rev-sub', email: 'rev@example.com' }, { userAgent: CHROME_UA });
    const page = await env.call('GET', '/dashboard/sessions?user=rev%40example.com', { as: env.admin });
    const button = /<button[^>]*data-revoke-session data-id="([^"]+)" data-user="rev@example\.com" data-browser="Safari 17 on iOS"/.exec(page.text);
    assert.ok(button, 'a Revoke button names the session’s handle');
    assert.equal(button[1], phone.handle);
    assert.match(page.text, /src="\/dashboard\/assets\/sessions\.[0-9a-f]+\.js"/);

    assert.equal((await env.call('DELETE', `/api/sessions/${phone.handle}`, { as: env.admin, csrf: null })).status, 403, 'CSRF required');
    assert.equal(await signedIn(phone), true);
    assert.equal((await env.call('DELETE', `/api/sessions/${phone.handle}`, { as: env.admin })).status, 204);
    assert.equal(await signedIn(phone), false);
    assert.equal(await signedIn(laptop), true);
    const [entry] = await auditEntries(1);
    assert.deepEqual(entry, { ...entry, action: 'SESSION_REVOKED', user_id: 'admin-sub' });
    assert.deepEqual(entry!.details, { subject: 'rev-sub', email: 'rev@example.com', count: 1, by: 'administrator', reason: 'admin-revoked' });
    const after = await env.call('GET', '/dashboard/sessions?user=rev-sub', { as: env.admin });
    assert.deepEqual(tableRows(after.text).map((row) => /data-id="([^"]+)"/.exec(row)![1]), [laptop.handle]);
  });

  it('Sign out everywhere (after the dialog, through the API): every session of that user ends; audited once', async () => {
    const one = await browserOf(env.gw, { sub: 'all-sub', email: 'all@example.com' });
    const two = await browserOf(env.gw, { sub: 'all-sub', email: 'all@example.com' }, { userAgent: FIREFOX_UA });
    const page = await env.call('GET', '/dashboard/sessions?user=all-sub', { as: env.admin });
    assert.match(page.text, /<button type="button" class="button danger" data-sign-out-user data-sub="all-sub" data-user="all@example\.com"[\s\S]*?aria-label="Sign out all@example\.com everywhere">Sign out everywhere<\/button>/);
    assert.match(page.text, /<dialog id="confirm-dialog"/, 'the console’s confirmation dialog');
    assert.equal((await env.call('DELETE', '/api/users/all-sub/sessions', { as: env.admin, csrf: 'wrong' })).status, 403, 'CSRF required');
    assert.equal(await signedIn(one), true);
    const response = await env.call('DELETE', '/api/users/all-sub/sessions', { as: env.admin });
    assert.deepEqual(response.json, { revoked: 2 });
    assert.equal(await signedIn(one), false);
    assert.equal(await signedIn(two), false);
    assert.equal(await signedIn(member), true, 'other users stay signed in');
    const [entry] = await auditEntries(1);
    assert.equal(entry!.action, 'SESSION_REVOKED');
    assert.deepEqual(entry!.details, { subject: 'all-sub', email: 'all@example.com', count: 2, by: 'administrator', reason: 'admin-revoked' });
    assert.match((await env.call('GET', '/dashboard/sessions?user=all-sub', { as: env.admin })).text, /all-sub has no live session/);
  });

  it('the audit log links users to their sessions and says who ended which sessions and why', async () => {
    // The entries of the tests above, and ones as the back-channel logout and the refresh checks write them.
    const audit = new AuditLog(env.gw.gateway.db);
    const ended = (email: string, count: number, by: string, reason: string) =>
      audit.record({ action: 'SESSION_REVOKED', userId: null, ipAddress: null, serviceId: null, details: { subject: `${email}-sub`, email, count, by, reason } });
    ended('bcl@example.com', 2, 'identity provider', 'backchannel-logout');
    ended('sealed@example.com', 1, 'gateway', 'refresh-token-unreadable');
    const page = await env.call('GET', '/dashboard/audit', { as: env.admin });
    assert.equal(page.status, 200);
    assert.match(page.text, /<td data-label="Who"><a href="\/dashboard\/sessions\?user=admin-sub" title="Sessions of this user"><code>admin-sub<\/code><\/a><\/td>/);
    assert.match(page.text, /2 sessions of <a href="\/dashboard\/sessions\?user=all-sub" title="Sessions of all@example\.com">all@example\.com<\/a>, by an administrator/);
    assert.match(page.text, /1 session of <a href="\/dashboard\/sessions\?user=rev-sub"[^>]*>rev@example\.com<\/a>, by an administrator/);
    assert.match(page.text, /<td data-label="Who"><span class="muted">the identity provider<\/span><\/td>[\s\S]*?2 sessions of <a href="\/dashboard\/sessions\?user=bcl%40example\.com-sub"[^>]*>bcl@example\.com<\/a>, by the identity provider \(back-channel logout\)/);
    assert.match(page.text, /<td data-label="Who"><span class="muted">the gateway<\/span><\/td>[\s\S]*?1 session of <a[^>]*>sealed@example\.com<\/a>, by the gateway \(the refresh token is sealed with a key no longer configured\)/);
    const overview = await env.call('GET', '/dashboard', { as: env.admin });
    assert.match(overview.text, /<a href="\/dashboard\/sessions">Who is signed in →<\/a>/);
  });
});

describe('/auth/sessions: a user’s own sessions', () => {
  let here: SignedIn & { handle: string };
  let phone: SignedIn & { handle: string };
  let laptop: SignedIn & { handle: string };
  let stranger: SignedIn & { handle: string };
  const uma = { sub: 'uma-sub', name: 'Uma User', email: 'uma@example.com' };

  before(async () => {
    laptop = await browserOf(env.gw, uma, { userAgent: CHROME_UA, ipAddress: '203.0.113.9', createdAt: Date.now() - 2 * 86_400_000, lastSeenAt: Date.now() - 3 * 3_600_000 });
    phone = await browserOf(env.gw, uma, { userAgent: SAFARI_UA, ipAddress: '198.51.100.4', createdAt: Date.now() - 3_600_000, lastSeenAt: Date.now() - 5 * 60_000 });
    here = await browserOf(env.gw, uma, { userAgent: FIREFOX_UA });
    stranger = await browserOf(env.gw, { sub: 'stranger-sub', name: 'Stan Stranger', email: 'stan@example.com' }, { userAgent: CHROME_UA });
  });

  it('anonymous: a browser goes to the login page coming back here, an API client gets 401', async () => {
    const browser = await env.call('GET', '/auth/sessions', { headers: { accept: 'text/html,application/xhtml+xml' } });
    assert.equal(browser.status, 302);
    assert.equal(browser.headers.location, '/auth/login-page?returnTo=%2Fauth%2Fsessions');
    const api = await env.call('GET', '/auth/sessions');
    assert.equal(api.status, 401);
    assert.deepEqual(api.json, { error: 'Not authenticated' });
    assert.equal((await postForm('/auth/sessions/revoke', undefined, { session: phone.handle })).status, 401);
    assert.equal((await postForm('/auth/sessions/revoke-others', undefined, {})).status, 401);
    assert.equal(await signedIn(phone), true);
  });

  it('lists only the user’s own sessions, newest first, this browser marked and without a sign-out form', async () => {
    const page = await env.call('GET', '/auth/sessions', { as: here });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /<title>Your sessions · Gatehouse<\/title>/);
    assert.match(page.text, /Signed in as <strong>Uma User<\/strong>/);
    const items = page.text.match(/<li[ >][\s\S]*?<\/li>/g) ?? [];
    assert.equal(items.length, 3);
    assert.match(items[0]!, /aria-current="true"[\s\S]*Firefox 127 on Android<\/strong><span class="badge">This browser<\/span>/);
    assert.doesNotMatch(items[0]!, /<form/);
    assert.match(items[1]!, /Safari 17 on iOS[\s\S]*From <code>198\.51\.100\.4<\/code> · signed in <time[^>]*>1 hour ago<\/time> · last seen <time[^>]*>just now<\/time>/, 'the profile check above was a use');
    assert.match(items[2]!, /Chrome 126 on Windows[\s\S]*signed in <time[^>]*>2 days ago<\/time> · last seen <time[^>]*>3 hours ago<\/time>/);
    assert.ok(!page.text.includes('stan@example.com') && !page.text.includes(stranger.handle), 'no one else’s session');
    for (const secret of [phone.csrfToken, laptop.csrfToken, here.cookie.split('=')[1]!, phone.cookie.split('=')[1]!]) {
      assert.ok(!page.text.includes(secret), 'no session id, no other session’s CSRF token');
    }
    const forms = parseForms(page.text, `${env.gw.origin}/auth/sessions`).filter((form) => form.method === 'post');
    for (const form of forms) assert.equal(form.fields.find((f) => f.name === '_csrf')?.value, here.csrfToken);
    const revokeForms = forms.filter((form) => form.action === `${env.gw.origin}/auth/sessions/revoke`);
    assert.deepEqual(revokeForms.map((form) => form.fields.find((f) => f.name === 'session')?.value), [phone.handle, laptop.handle]);
    assert.equal(forms.filter((form) => form.action === `${env.gw.origin}/auth/sessions/revoke-others`).length, 1);
    assert.match(decodeEntities(page.text), /Sign out everywhere else<\/button>\n<span class="muted">ends the 2 other sessions/);
  });

  it('refuses another user’s handle (404), the current one (400) and a missing CSRF token (403), changing nothing', async () => {
    const foreign = await postForm('/auth/sessions/revoke', here, { _csrf: here.csrfToken, session: stranger.handle });
    assert.equal(foreign.status, 404);
    assert.deepEqual(JSON.parse(foreign.text), { error: 'Session not found' });
    assert.equal((await postForm('/auth/sessions/revoke', here, { _csrf: here.csrfToken, session: 'no-such-handle' })).status, 404);
    assert.equal((await postForm('/auth/sessions/revoke', here, { _csrf: here.csrfToken, session: here.handle })).status, 400);
    assert.equal((await postForm('/auth/sessions/revoke', here, { session: phone.handle })).status, 403);
    assert.equal((await postForm('/auth/sessions/revoke', here, { _csrf: stranger.csrfToken, session: phone.handle })).status, 403, 'another session’s token');
    assert.equal((await postForm('/auth/sessions/revoke-others', here, { _csrf: 'x' })).status, 403);
    assert.equal((await env.call('POST', '/auth/sessions/revoke-others', { as: here, csrf: null })).status, 403);
    for (const who of [stranger, here, phone, laptop]) assert.equal(await signedIn(who), true);
  });

  it('Sign out this one: 303 back to the page, that browser is signed out, audited as the user', async () => {
    const response = await postForm('/auth/sessions/revoke', here, { _csrf: here.csrfToken, session: phone.handle });
    assert.equal(response.status, 303);
    assert.equal(response.headers.location, '/auth/sessions?ended=1');
    assert.equal(await signedIn(phone), false);
    assert.equal(await signedIn(here), true);
    assert.equal(await signedIn(laptop), true);
    const [entry] = await auditEntries(1);
    assert.deepEqual({ action: entry!.action, user_id: entry!.user_id }, { action: 'SESSION_REVOKED', user_id: 'uma-sub' });
    assert.deepEqual(entry!.details, { subject: 'uma-sub', email: 'uma@example.com', count: 1, by: 'user', reason: 'signed-out-elsewhere' });
    const page = await env.call('GET', '/auth/sessions?ended=1', { as: here });
    assert.match(page.text, /role="status">Signed out 1 session\./);
    assert.ok(!page.text.includes(phone.handle));
    // Already ended: 404, as for any handle that is not a live session of theirs.
    assert.equal((await postForm('/auth/sessions/revoke', here, { _csrf: here.csrfToken, session: phone.handle })).status, 404);
  });

  it('Sign out everywhere else: every other session ends, this one keeps working; the X-CSRF-Token header works too', async () => {
    const tablet = await browserOf(env.gw, uma, { userAgent: FIREFOX_UA });
    const response = await env.call('POST', '/auth/sessions/revoke-others', { as: here });
    assert.equal(response.status, 303);
    assert.equal(response.headers.location, '/auth/sessions?ended=2');
    assert.equal(await signedIn(laptop), false);
    assert.equal(await signedIn(tablet), false);
    assert.equal(await signedIn(here), true);
    assert.equal(await signedIn(stranger), true);
    const [entry] = await auditEntries(1);
    assert.deepEqual(entry!.details, { subject: 'uma-sub', email: 'uma@example.com', count: 2, by: 'user', reason: 'signed-out-elsewhere' });
    const page = await env.call('GET', '/auth/sessions', { as: here });
    assert.equal((page.text.match(/<li[ >]/g) ?? []).length, 1);
    assert.match(page.text, /No other browser is signed in with your account\./);
    assert.doesNotMatch(page.text, /revoke-others/);
    // Nothing left to end: still 303, and nothing audited.
    const again = await postForm('/auth/sessions/revoke-others', here, { _csrf: here.csrfToken });
    assert.equal(again.status, 303);
    assert.equal(again.headers.location, '/auth/sessions?ended=0');
    assert.equal((await auditEntries(1))[0]!.details.count, 2, 'nothing more audited');
  });

  it('the audit log says the user ended them', async () => {
    const page = await env.call('GET', '/dashboard/audit', { as: env.admin });
    assert.match(page.text, /2 sessions of <a href="\/dashboard\/sessions\?user=uma-sub"[^>]*>uma@example\.com<\/a>, by the user, from another of their sessions/);
  });
});

describe('with ADMIN_URL: the console origin’s sessions and the public origin’s are apart', () => {
  let split: TestGateway;
  before(async () => {
    const adminPort = await freePort();
    split = await startTestGateway({ ADMIN_PORT: String(adminPort), ADMIN_URL: `http://127.0.0.1:${adminPort}` });
  });
  after(() => split?.close());

  it('each origin’s /auth/sessions lists and ends only sessions of that origin', async () => {
    const who = { sub: 'both-sub', name: 'Bo Both', email: 'bo@example.com', isAdmin: true };
    const publicOne = await browserOf(split, who, { userAgent: CHROME_UA });
    const publicTwo = await browserOf(split, who, { userAgent: SAFARI_UA });
    const consoleOne = await browserOf(split, who, { userAgent: FIREFOX_UA }, 'admin');
    const onPublic = await apiClient(split.origin)('GET', '/auth/sessions', { as: publicOne });
    assert.equal(onPublic.status, 200);
    assert.equal((onPublic.text.match(/<li[ >]/g) ?? []).length, 2);
    assert.ok(!onPublic.text.includes(consoleOne.handle));
    const onAdmin = await apiClient(split.adminUrl)('GET', '/auth/sessions', { as: consoleOne });
    assert.equal(onAdmin.status, 200);
    assert.equal((onAdmin.text.match(/<li[ >]/g) ?? []).length, 1);
    // The public origin cannot end the console's session, nor the reverse.
    assert.equal((await postForm('/auth/sessions/revoke', publicOne, { _csrf: publicOne.csrfToken, session: consoleOne.handle }, split.origin)).status, 404);
    assert.equal((await postForm('/auth/sessions/revoke', consoleOne, { _csrf: consoleOne.csrfToken, session: publicTwo.handle }, split.adminUrl)).status, 404);
    assert.equal((await postForm('/auth/sessions/revoke-others', publicOne, { _csrf: publicOne.csrfToken }, split.origin)).headers.location, '/auth/sessions?ended=1');
    assert.equal(await signedIn(publicTwo, split.origin), false);
    assert.equal(await signedIn(consoleOne, split.adminUrl), true);
    // The console's Sessions page (on ADMIN_URL) shows both, the console's marked.
    const page = await apiClient(split.adminUrl)('GET', '/dashboard/sessions?user=both-sub', { as: consoleOne });
    assert.equal(page.status, 200);
    const rows = tableRows(page.text);
    assert.equal(rows.length, 2);
    assert.ok(rows.some((row) => row.includes('This browser') && row.includes('>Console</span>')));
  });
});
