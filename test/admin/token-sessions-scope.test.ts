/**
 * design.md §4.8, the `sessions` scope, tried as the attack: a leaked write token loops over the
 * sessions API to sign out every administrator as they sign in, so that none stays signed in long
 * enough to revoke it (only a session revokes a token). Without the scope every such call is
 * refused and ends nothing; with `write sessions` it works; other users' sessions end as before.
 * Also: how the scope is asked for, stored and shown, and that the migration gives it to no
 * existing token.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../../admin/database.js';
import { MIGRATIONS } from '../../admin/migrations.js';
import { useAdminSession } from '../support/admin-session.js';
import type { SignedIn } from '../support/sessions.js';
import { assertError, bearer, createToken } from './api-token-checks.js';

const REFUSED = "Ending an administrator's sessions needs a token with the sessions scope";
const SESSIONS_CHALLENGE = 'Bearer error="insufficient_scope", scope="sessions"';

const env = useAdminSession({ api: 'admin' });

/** Whether `who`'s session still works. */
const stillSignedIn = async (who: SignedIn) => (await env.call('GET', '/auth/profile', { as: who })).status === 200;
/** The handles of `sub`'s live sessions, as the API lists them. */
const handlesOf = async (sub: string) => ((await env.call('GET', `/api/sessions?user=${encodeURIComponent(sub)}`, { as: env.admin })).json.sessions as { id: string }[]).map((s) => s.id);
const revocationsOf = async (sub: string) =>
  ((await env.call('GET', '/dashboard/logs?limit=1000', { as: env.admin })).json.logs as { action: string; details: string }[])
    .filter((log) => log.action === 'SESSION_REVOKED' && JSON.parse(log.details).subject === sub);

describe('a leaked write token against the administrators’ sessions', () => {
  it('cannot end an administrator’s sessions, however often it loops: 403 naming the scope, nothing ends, nothing is audited', async () => {
    const leaked = await createToken(env.gw.adminUrl, env.admin, { name: 'leaked', scope: 'write' });
    const victim = await env.signIn({ sub: 'ops-admin', email: 'ops@example.com' });
    const [handle] = await handlesOf('ops-admin');
    for (let round = 0; round < 5; round++) {
      assertError(await env.call('DELETE', '/api/users/ops-admin/sessions', { authorization: bearer(leaked.secret) }), 403, REFUSED, SESSIONS_CHALLENGE);
      assertError(await env.call('DELETE', `/api/users/${env.admin.user.sub}/sessions`, { authorization: bearer(leaked.secret) }), 403, REFUSED, SESSIONS_CHALLENGE);
      assertError(await env.call('DELETE', `/api/sessions/${handle}`, { authorization: bearer(leaked.secret) }), 403, REFUSED, SESSIONS_CHALLENGE);
    }
    assert.ok(await stillSignedIn(victim), 'the administrator is still signed in');
    assert.ok(await stillSignedIn(env.admin), 'and so is the one who made the token');
    assert.deepEqual(await revocationsOf('ops-admin'), []);
    // The administrator is there to revoke it, and does.
    assert.equal((await env.call('DELETE', `/api/tokens/${leaked.id}`, { as: victim })).status, 204);
    assert.equal((await env.call('GET', '/api/sessions', { authorization: bearer(leaked.secret) })).status, 401);
  });

  it('a subject with an administrator’s session among others: refused as a whole, none of them ends', async () => {
    const write = await createToken(env.gw.adminUrl, env.admin, { name: 'mixed', scope: 'write' });
    const asAdmin = await env.signIn({ sub: 'mixed-sub', isAdmin: true });
    const asUser = await env.signIn({ sub: 'mixed-sub', isAdmin: false });
    assertError(await env.call('DELETE', '/api/users/mixed-sub/sessions', { authorization: bearer(write.secret) }), 403, REFUSED, SESSIONS_CHALLENGE);
    assert.ok((await stillSignedIn(asAdmin)) && (await stillSignedIn(asUser)));
  });

  it('still ends other users’ sessions, one or all of them, as before', async () => {
    const write = await createToken(env.gw.adminUrl, env.admin, { name: 'offboarding', scope: 'write' });
    const first = await env.signIn({ sub: 'plain-user', isAdmin: false });
    const second = await env.signIn({ sub: 'plain-user', isAdmin: false });
    const [one] = await handlesOf('plain-user');
    assert.equal((await env.call('DELETE', `/api/sessions/${one}`, { authorization: bearer(write.secret) })).status, 204);
    const everywhere = await env.call('DELETE', '/api/users/plain-user/sessions', { authorization: bearer(write.secret) });
    assert.deepEqual(everywhere.json, { revoked: 1 });
    assert.ok(!(await stillSignedIn(first)) && !(await stillSignedIn(second)));
    assert.equal((await revocationsOf('plain-user')).length, 2);
  });

  it('an administrator’s session may end an administrator’s sessions, as before', async () => {
    const other = await env.signIn({ sub: 'other-admin' });
    assert.deepEqual((await env.call('DELETE', '/api/users/other-admin/sessions', { as: env.admin })).json, { revoked: 1 });
    assert.ok(!(await stillSignedIn(other)));
  });
});

describe('a token with the sessions scope', () => {
  it('ends an administrator’s sessions, one or all, audited with the token as actor', async () => {
    const ops = await createToken(env.gw.adminUrl, env.admin, { name: 'incident response', scope: 'write sessions' });
    assert.equal(ops.scope, 'write sessions');
    const one = await env.signIn({ sub: 'lost-laptop' });
    const two = await env.signIn({ sub: 'lost-laptop' });
    const [handle] = await handlesOf('lost-laptop');
    assert.equal((await env.call('DELETE', `/api/sessions/${handle}`, { authorization: bearer(ops.secret) })).status, 204);
    assert.deepEqual((await env.call('DELETE', '/api/users/lost-laptop/sessions', { authorization: bearer(ops.secret) })).json, { revoked: 1 });
    assert.ok(!(await stillSignedIn(one)) && !(await stillSignedIn(two)));
    const audited = await env.call('GET', '/dashboard/logs?limit=1000', { as: env.admin });
    const actors = (audited.json.logs as { action: string; user_id: string; details: string }[])
      .filter((log) => log.action === 'SESSION_REVOKED' && JSON.parse(log.details).subject === 'lost-laptop')
      .map((log) => log.user_id);
    assert.deepEqual(actors, [`token:${ops.id}`, `token:${ops.id}`]);
  });
});

describe('asking for the scope', () => {
  it('scope is "read", "write" or "write sessions", shown as asked; anything else is refused and nothing is made', async () => {
    const sessions = await createToken(env.gw.adminUrl, env.admin, { name: 'with sessions', scope: 'write sessions' });
    assert.equal(sessions.scope, 'write sessions');
    const listed = (await env.call('GET', '/api/tokens', { as: env.admin })).json.find((t: { id: string }) => t.id === sessions.id);
    assert.equal(listed.scope, 'write sessions');
    for (const scope of ['sessions', 'sessions write', 'read sessions', 'read write', 'write  sessions', 'write admin', '', 7]) {
      const refused = await env.call('POST', '/api/tokens', { as: env.admin, json: { name: 'refused', scope } });
      assertError(refused, 400, 'Invalid API token: scope must be read, write or write sessions');
      assert.deepEqual(refused.json.fields, { scope: 'must be read, write or write sessions' });
    }
    assert.ok(!(await env.call('GET', '/api/tokens', { as: env.admin })).json.some((t: { name: string }) => t.name === 'refused'), 'nothing was made');
  });

  it('the console offers it, says why, and lists it', async () => {
    const page = await env.call('GET', '/dashboard/tokens', { as: env.admin });
    assert.ok(page.text.includes('<option value="write sessions">Write and sessions: also ends administrators&#39; sessions</option>'));
    assert.match(page.text, /A leaked write token cannot sign out the administrators who would revoke it/);
    assert.match(page.text, /<td data-label="Scope">Write, sessions<\/td>/);
  });

  it('the OpenAPI document lists the scope and the refusal', async () => {
    const document = (await env.call('GET', '/api/openapi.json')).json;
    assert.deepEqual(document.components.schemas.ApiToken.properties.scope.enum, ['read', 'write', 'write sessions']);
    const refusal = document.paths['/api/users/{sub}/sessions'].delete.responses['403'];
    assert.ok(JSON.stringify(refusal.content).includes(REFUSED));
    assert.match(refusal.headers['WWW-Authenticate'].description, /scope="sessions"/);
  });
});

describe('the migration that brings the scope', () => {
  it('keeps every token’s scope: no existing token gains sessions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-scope-migration-'));
    try {
      const path = join(dir, 'gateway.db');
      const index = MIGRATIONS.findIndex((sql) => sql.includes("'write sessions'"));
      assert.ok(index > 0);
      const old = new BetterSqlite3(path);
      for (const sql of MIGRATIONS.slice(0, index)) old.exec(sql);
      old.pragma(`user_version = ${index}`);
      const insert = old.prepare('INSERT INTO api_tokens (id, name, scope, secret_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)');
      insert.run('w', 'old write', 'write', 'a'.repeat(64), 'admin-sub', 1);
      insert.run('r', 'old read', 'read', 'b'.repeat(64), 'admin-sub', 2);
      assert.throws(() => insert.run('s', 'new', 'write sessions', 'c'.repeat(64), 'admin-sub', 3), /CHECK constraint failed/);
      old.close();
      const db = openDatabase(path);
      assert.deepEqual(db.prepare('SELECT id, scope FROM api_tokens ORDER BY id').all(), [{ id: 'r', scope: 'read' }, { id: 'w', scope: 'write' }]);
      db.prepare('INSERT INTO api_tokens (id, name, scope, secret_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)').run('s', 'new', 'write sessions', 'c'.repeat(64), 'admin-sub', 3);
      assert.throws(() => db.prepare("UPDATE api_tokens SET scope = 'sessions' WHERE id = 's'").run(), /CHECK constraint failed/);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
