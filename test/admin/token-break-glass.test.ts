/**
 * design.md §4.8's break-glass CLI, `gatehouse tokens list|revoke <id>`, tried as the operator
 * whose administrators cannot stay signed in: run on the admin host as a real process against the
 * gateway's DATABASE_PATH, with no session, while the admin process is down and while it runs. The
 * token is refused at once in both cases (a running gateway looks every token up in the file), and
 * the audit log names the local operator. Embedded, and split (an admin process stopped and
 * started again, proxies handing the API over to it).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../admin/database.js';
import { apiClient } from '../support/api-client.js';
import { runGatehouseCli } from '../support/gatehouse-cli.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { startGatehouseProcess, statusOf } from '../support/gatehouse-process.js';
import { assertError, bearer, createToken } from './api-token-checks.js';

const INVALID_TOKEN = 'Bearer error="invalid_token"';
const OPERATOR = `local:${userInfo().username}`;

let dir: string;
let databasePath: string;
/** The gateway of the current step, if one runs. */
let gw: TestGateway | undefined;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-break-glass-'));
  databasePath = join(dir, 'gateway.db');
});
after(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const startGateway = async () => (gw = await startTestGateway({ DATABASE_PATH: databasePath }));
const tokensCli = (args: string[], env: Record<string, string | undefined> = { DATABASE_PATH: databasePath }) => runGatehouseCli(['tokens', ...args], env);
/** A token's answer on the admin port: 200 while it lives. */
const use = async (secret: string) => apiClient(gw!.adminUrl)('GET', '/api/services', { authorization: bearer(secret) });
const revocations = (db = openDatabase(databasePath)) => {
  try {
    return db.prepare("SELECT user_id, ip_address, details FROM audit_logs WHERE action = 'TOKEN_REVOKED' ORDER BY id").all() as { user_id: string; ip_address: string | null; details: string }[];
  } finally {
    db.close();
  }
};

describe('gatehouse tokens, on the admin host', () => {
  it('while the admin process is down: lists the tokens and revokes the leaked one, which gets 401 once the gateway is back', async () => {
    await startGateway();
    const admin = await signIn(gw!);
    const leaked = await createToken(gw!.adminUrl, admin, { name: 'leaked deploy key', scope: 'write' });
    const kept = await createToken(gw!.adminUrl, admin, { name: 'nightly report', scope: 'read', expiresInDays: null });
    assert.equal((await use(leaked.secret)).status, 200);
    await gw!.close();
    gw = undefined;

    const listed = await tokensCli(['list']);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.split('\n');
    assert.match(lines[0]!, /^ID +NAME +SCOPE +CREATED BY +CREATED +LAST USED +EXPIRES$/);
    assert.match(listed.stdout, new RegExp(`^${kept.id}  nightly report +read +admin-sub +\\S+Z +never +never$`, 'm'));
    assert.match(listed.stdout, new RegExp(`^${leaked.id}  leaked deploy key +write +admin-sub +\\S+Z +\\S+Z +\\S+Z$`, 'm'));
    assert.equal(lines.at(-2), `2 tokens not revoked in ${databasePath}.`);
    assert.doesNotMatch(listed.stdout, /ght_/, 'no secret, no hash');

    const revoked = await tokensCli(['revoke', leaked.id]);
    assert.deepEqual(revoked, { code: 0, stdout: `Revoked token ${leaked.id} “leaked deploy key” (write): its requests are refused (401) from now on.\n`, stderr: '' });
    const again = await tokensCli(['revoke', leaked.id]);
    assert.deepEqual(again, { code: 1, stdout: '', stderr: `gatehouse: no token ${leaked.id} in ${databasePath}, or it is revoked already (gatehouse tokens list shows the others).\n` });

    await startGateway();
    assertError(await use(leaked.secret), 401, 'Not authenticated', INVALID_TOKEN);
    assert.equal((await use(kept.secret)).status, 200, 'the other token works');
    const [entry] = revocations();
    assert.equal(entry!.user_id, OPERATOR);
    assert.equal(entry!.ip_address, null);
    assert.deepEqual(JSON.parse(entry!.details), { token: { id: leaked.id, name: 'leaked deploy key', scope: 'write', expiresAt: JSON.parse(entry!.details).token.expiresAt } });
    const audit = await apiClient(gw!.adminUrl)('GET', '/dashboard/logs', { as: await signIn(gw!) });
    assert.equal(audit.json.logs.find((log: { action: string }) => log.action === 'TOKEN_REVOKED').user_id, OPERATOR, 'the API shows who');
  });

  it('while the admin process runs: the token’s very next request is refused', async () => {
    gw ??= await startGateway();
    const admin = await signIn(gw);
    const leaked = await createToken(gw.adminUrl, admin, { name: 'leaked while up', scope: 'write sessions' });
    assert.equal((await use(leaked.secret)).status, 200);
    const revoked = await tokensCli(['revoke', leaked.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assertError(await use(leaked.secret), 401, 'Not authenticated', INVALID_TOKEN);
    assertError(await apiClient(gw.origin)('GET', '/api/services', { authorization: bearer(leaked.secret) }), 401, 'Not authenticated', INVALID_TOKEN);
    assert.ok(!(await apiClient(gw.adminUrl)('GET', '/api/tokens', { as: admin })).json.some((t: { id: string }) => t.id === leaked.id), 'gone from the list');
    assert.equal(revocations().at(-1)!.user_id, OPERATOR);
    const listed = await tokensCli(['list']);
    assert.equal(listed.code, 0);
    assert.doesNotMatch(listed.stdout, new RegExp(leaked.id));
  });

  it('a wrong DATABASE_PATH is said and nothing is created or changed; wrong usage: exit status 2', async () => {
    const missing = join(dir, 'nowhere', 'gateway.db');
    assert.deepEqual(await tokensCli(['list'], { DATABASE_PATH: missing }), {
      code: 1,
      stdout: '',
      stderr: `gatehouse: no database at ${missing}: run this on the admin host with the admin process's DATABASE_PATH.\n`,
    });
    assert.ok(!existsSync(join(dir, 'nowhere')), 'no folder or file made');
    const empty = join(dir, 'other.sqlite');
    writeFileSync(empty, ''); // an empty SQLite database, no Gatehouse schema
    const run = await tokensCli(['revoke', '00000000-0000-4000-8000-000000000000'], { DATABASE_PATH: empty });
    assert.deepEqual(run, { code: 1, stdout: '', stderr: `gatehouse: ${empty} is not a Gatehouse database: set DATABASE_PATH to the admin process's.\n` });
    assert.equal(readFileSync(empty).length, 0, 'untouched');
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, but long enough to have a header of a hundred bytes or so to be read as one.');
    const notSqlite = await tokensCli(['list'], { DATABASE_PATH: text });
    assert.equal(notSqlite.code, 1);
    assert.match(notSqlite.stderr, /^gatehouse: cannot read .*notes\.txt: file is not a database\n$/);

    for (const args of [[], ['drop'], ['revoke'], ['list', 'extra'], ['revoke', 'a', 'b']]) {
      const wrong = await tokensCli(args);
      assert.equal(wrong.code, 2, args.join(' '));
      assert.match(wrong.stderr, /^gatehouse: .+\n\nUsage: gatehouse services <command> <file>\n {7}gatehouse tokens list\n/, args.join(' '));
    }
  });
});

describe('the console and a session-less operator', () => {
  const env = useAdminSession({ api: 'admin' });

  it('the console’s audit log shows the local operator as the one who revoked it', async () => {
    const token = await createToken(env.gw.adminUrl, env.admin, { name: 'revoked on the host', scope: 'read' });
    const run = await tokensCli(['revoke', token.id], { DATABASE_PATH: env.gw.databasePath });
    assert.equal(run.code, 0, run.stderr);
    const page = await env.call('GET', '/dashboard/audit', { as: env.admin });
    const row = (page.text.match(/<tr>[\s\S]*?<\/tr>/g) ?? []).find((r) => r.includes('“revoked on the host”') && r.includes('revoked')) ?? '';
    assert.ok(row.includes(`an operator on the admin host<br><code class="muted">${OPERATOR}</code>`), row);
  });
});

describe('split mode: the admin process and proxy processes', () => {
  const env = useAdminSession({ topology: 'split' });
  const through = (url: string, secret: string) => apiClient(url)('GET', '/api/services', { authorization: bearer(secret) });

  it('revoked while the admin process runs: refused at once on the admin port and through a proxy', async () => {
    const leaked = await createToken(env.split.adminUrl, env.admin, { name: 'split leak', scope: 'write' });
    assert.equal((await through(env.split.proxies[0].url, leaked.secret)).status, 200);
    const run = await tokensCli(['revoke', leaked.id], { DATABASE_PATH: env.split.databasePath });
    assert.equal(run.code, 0, run.stderr);
    assertError(await through(env.split.proxies[0].url, leaked.secret), 401, 'Not authenticated', INVALID_TOKEN);
    assertError(await through(env.split.adminUrl, leaked.secret), 401, 'Not authenticated', INVALID_TOKEN);
  });

  it('revoked while the admin process is stopped: refused once it is back', async () => {
    const leaked = await createToken(env.split.adminUrl, env.admin, { name: 'split leak, admin down', scope: 'write' });
    await env.split.admin.stop();
    const listed = await tokensCli(['list'], { DATABASE_PATH: env.split.databasePath });
    assert.match(listed.stdout, new RegExp(`^${leaked.id}  split leak, admin down +write `, 'm'));
    assert.equal((await tokensCli(['revoke', leaked.id], { DATABASE_PATH: env.split.databasePath })).code, 0);
    const admin = startGatehouseProcess('admin/process/main.js', { ...env.split.env, DATABASE_PATH: env.split.databasePath });
    try {
      await eventually(`the admin process to be ready again\n${admin.output()}`, async () => (await statusOf(`${env.split.adminUrl}/readyz`)) === 200, 30_000);
      assertError(await through(env.split.proxies[0].url, leaked.secret), 401, 'Not authenticated', INVALID_TOKEN);
      assert.equal(revocations(openDatabase(env.split.databasePath)).at(-1)!.user_id, OPERATOR);
    } finally {
      await admin.stop();
    }
  });
});
