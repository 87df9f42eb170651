/**
 * The identity assertion's keys in the admin plane (design.md §4.7), through the embedded gateway:
 * made on the first start and kept across restarts in SQLite, rotated by an admin
 * (`POST /api/assertion-keys/rotate`, audited) or by age (ASSERTION_KEY_LIFETIME), and never
 * shown anywhere with their private part.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { calculateJwkThumbprint, type JSONWebKeySet } from 'jose';
import { request } from 'undici';
import { openDatabase } from '../../admin/database.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';

const running: TestGateway[] = [];
const folders: string[] = [];
after(async () => {
  await Promise.all(running.map((gw) => gw.close()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}): Promise<TestGateway> {
  const gw = await startTestGateway(env);
  running.push(gw);
  return gw;
}

async function stop(gw: TestGateway): Promise<void> {
  running.splice(running.indexOf(gw), 1);
  await gw.close();
}

/** A database file that outlives one gateway. */
function keptDatabase(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gatehouse-keys-'));
  folders.push(folder);
  return join(folder, 'gateway.db');
}

async function publishedKids(gw: TestGateway): Promise<string[]> {
  const response = await request(`${gw.origin}/.well-known/jwks.json`);
  assert.equal(response.statusCode, 200);
  return ((await response.body.json()) as JSONWebKeySet).keys.map((key) => key.kid!);
}

describe('POST /api/assertion-keys/rotate', () => {
  it('needs an admin session and its CSRF token', async () => {
    const gw = await start();
    const call = apiClient(gw.origin);
    const member = await signIn(gw, { sub: 'member', isAdmin: false });
    const admin = await signIn(gw);
    const before = await publishedKids(gw);
    assert.equal((await call('POST', '/api/assertion-keys/rotate')).status, 401);
    assert.equal((await call('POST', '/api/assertion-keys/rotate', { as: member })).status, 403);
    const noToken = await call('POST', '/api/assertion-keys/rotate', { as: admin, csrf: null });
    assert.deepEqual([noToken.status, noToken.json], [403, { error: 'Invalid CSRF token' }]);
    assert.equal((await call('GET', '/api/assertion-keys/rotate', { as: admin })).status, 405);
    assert.deepEqual(await publishedKids(gw), before, 'nothing rotated');
  });

  it('signs with a new key at once, keeps the old one published, and is audited without any private part', async () => {
    const gw = await start();
    const call = apiClient(gw.origin);
    const admin = await signIn(gw);
    const [oldKid] = await publishedKids(gw);
    const { keys } = (await (await request(`${gw.origin}/.well-known/jwks.json`)).body.json()) as JSONWebKeySet;
    assert.equal(oldKid, await calculateJwkThumbprint(keys[0]!), 'kid: the key\'s RFC 7638 thumbprint');
    const rotated = await call('POST', '/api/assertion-keys/rotate', { as: admin });
    assert.equal(rotated.status, 200);
    assert.deepEqual(Object.keys(rotated.json).sort(), ['kid', 'previousKid']);
    assert.equal(rotated.json.previousKid, oldKid);
    assert.deepEqual(await publishedKids(gw), [rotated.json.kid, oldKid]);

    const [entry] = (await call('GET', '/dashboard/logs', { as: admin })).json.logs;
    assert.equal(entry.action, 'ASSERTION_KEY_ROTATED');
    assert.equal(entry.user_id, 'admin-sub');
    assert.equal(entry.ip_address, '127.0.0.1');
    assert.deepEqual(JSON.parse(entry.details), { kid: rotated.json.kid, previousKid: oldKid, reason: 'manual' });
    const audit = await call('GET', '/dashboard/audit', { as: admin });
    assert.match(audit.text, /Assertion key rotated/);
    const stored = gw.gateway.db.prepare('SELECT private_jwk FROM assertion_keys').all() as { private_jwk: string }[];
    for (const { private_jwk } of stored) {
      const { d } = JSON.parse(private_jwk) as { d: string };
      assert.ok(!rotated.text.includes(d) && !audit.text.includes(d) && !JSON.stringify(entry).includes(d), 'no private key shown');
    }
  });
});

describe('the signing key over time', () => {
  it('is made on the first start and kept across restarts (same kid); a restart past ASSERTION_KEY_LIFETIME rotates it', async () => {
    const DATABASE_PATH = keptDatabase();
    const first = await start({ DATABASE_PATH });
    const [kid] = await publishedKids(first);
    assert.ok(kid);
    await stop(first);

    const second = await start({ DATABASE_PATH });
    assert.deepEqual(await publishedKids(second), [kid]);
    await stop(second);

    const db = openDatabase(DATABASE_PATH); // the key made 31 days ago, past the default 30d
    db.prepare('UPDATE assertion_keys SET created_at = created_at - ?').run(31 * 86_400_000);
    db.close();
    const third = await start({ DATABASE_PATH });
    const kids = await publishedKids(third);
    assert.equal(kids.length, 2);
    assert.notEqual(kids[0], kid, 'a new key signs');
    assert.equal(kids[1], kid, 'the old one stays published');
  });

  it('is replaced by itself once older than ASSERTION_KEY_LIFETIME, audited as the gateway\'s, and a retired key leaves after its grace', async () => {
    const gw = await start({ ASSERTION_KEY_LIFETIME: '2s', ASSERTION_TTL: '1s' });
    const admin = await signIn(gw);
    const firstKid = (await publishedKids(gw))[0]!;
    await eventually('a rotation by age', async () => (await publishedKids(gw))[0] !== firstKid, 10_000, 50);
    const [entry] = (await apiClient(gw.origin)('GET', '/dashboard/logs', { as: admin })).json.logs;
    assert.equal(entry.action, 'ASSERTION_KEY_ROTATED');
    assert.equal(entry.user_id, null);
    assert.equal(JSON.parse(entry.details).reason, 'lifetime');
    assert.equal(JSON.parse(entry.details).previousKid, firstKid);
    // ASSERTION_TTL 1 s: a retired key is published for 2 s, so at most the signing key and one
    // retired key are ever published, and the first key is gone soon.
    await eventually('the first key to leave', async () => !(await publishedKids(gw)).includes(firstKid), 10_000, 50);
    const rows = gw.gateway.db.prepare('SELECT kid FROM assertion_keys').all() as { kid: string }[];
    assert.ok(!rows.some((row) => row.kid === firstKid), 'deleted from the database too');
    assert.ok((await publishedKids(gw)).length <= 2);
  });
});
