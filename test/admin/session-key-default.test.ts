/**
 * Sessions are re-checked at the identity provider by default (README "Re-checks at the provider",
 * design.md §4.12): with SESSION_ENCRYPTION_KEY unset the admin process makes a key at its first
 * start and keeps it in its database, so a user removed from a group at the provider loses the
 * service that needs it within SESSION_REVALIDATE, across a restart and after the operator sets the
 * variable. A key anyone could guess (all one byte value) or a short one stops the start, named.
 * And a provider that issues no refresh token is said once in the log, not per sign-in.
 * Split mode: test/split/split-session-key-default.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { request } from 'undici';
import { sessionEncryptionKeys } from '../../admin/credentials/session-key-store.js';
import { openDatabase } from '../../admin/database.js';
import { createLogger } from '../../shared/logger.js';
import { createService } from '../support/api-client.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLIENT_ID, CLIENT_SECRET, startGatewayWithProvider } from '../support/gateway-with-provider.js';
import { DEMO_USERS, startIdentityProvider, type DemoUser, type IdentityProvider } from '../support/identity-provider.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const MAIN = new URL('../../admin/process/embedded-main.js', import.meta.url).pathname;
const SILENT = createLogger('silent', 'test');

function account(name: string): DemoUser {
  return { sub: `${name}-sub`, email: `${name}@example.com`, name, password: `${name}-password`, groups: ['staff'] };
}

/** Starts the embedded gateway (`npm start`) with `env` over the current environment; its exit status and stderr. */
function startWith(env: Record<string, string>): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [MAIN], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, stderr: run.stderr.trim() };
}

describe('SESSION_ENCRYPTION_KEY that is no secret', () => {
  it('a key of one repeated byte (all zero, all 0xff, any) stops the start, naming the variable, never echoing the key', () => {
    for (const key of [Buffer.alloc(32, 0).toString('hex'), Buffer.alloc(32, 0xff).toString('base64'), `${randomBytes(32).toString('hex')},${Buffer.alloc(32, 0x41).toString('base64url')}`]) {
      const run = startWith({ SESSION_ENCRYPTION_KEY: key });
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, /^gatehouse: SESSION_ENCRYPTION_KEY: key \d has every byte the same value, so it is no secret/);
      for (const part of key.split(',')) assert.ok(!run.stderr.includes(part), 'the key is echoed');
    }
  });

  it('a key shorter than 32 bytes stops the start, naming the variable', () => {
    for (const key of [randomBytes(16).toString('hex'), randomBytes(31).toString('base64')]) {
      const run = startWith({ SESSION_ENCRYPTION_KEY: key });
      assert.equal(run.status, 1, run.stderr);
      assert.equal(run.stderr, 'gatehouse: SESSION_ENCRYPTION_KEY: each key must be 32 bytes: 64 hex characters or 43-44 base64 characters (key 1 is not)');
    }
  });
});

describe('the key kept in the database (admin/credentials/session-key-store.ts)', () => {
  it('is made once, kept, only opens once the variable is set, and is deleted SESSION_TTL after that', () => {
    const db = openDatabase(':memory:');
    try {
      const ttl = 8 * 3_600_000;
      const [made] = sessionEncryptionKeys(db, { configured: [], sessionTtlMs: ttl, now: 0 }, SILENT);
      assert.equal(made!.length, 32);
      assert.deepEqual(sessionEncryptionKeys(db, { configured: [], sessionTtlMs: ttl, now: 1 }, SILENT), [made], 'the same key at the next start');
      const configured = randomBytes(32);
      assert.deepEqual(sessionEncryptionKeys(db, { configured: [configured], sessionTtlMs: ttl, now: 10 }, SILENT), [configured, made], 'the variable seals, the stored key still opens');
      assert.deepEqual(sessionEncryptionKeys(db, { configured: [configured], sessionTtlMs: ttl, now: 10 + ttl - 1 }, SILENT), [configured, made]);
      assert.deepEqual(sessionEncryptionKeys(db, { configured: [configured], sessionTtlMs: ttl, now: 10 + ttl }, SILENT), [configured], 'gone once every session it sealed has ended');
      assert.deepEqual(db.prepare('SELECT count(*) AS n FROM session_encryption_key').get(), { n: 0 });
      const [again] = sessionEncryptionKeys(db, { configured: [], sessionTtlMs: ttl, now: 20 + ttl }, SILENT);
      assert.ok(again!.length === 32 && !again!.equals(made!), 'the variable unset again: a new key is made');
    } finally {
      db.close();
    }
  });
});

describe('a fresh gateway with no SESSION_ENCRYPTION_KEY (embedded)', () => {
  const USERS = { groups: account('default-key-groups'), restart: account('default-key-restart') };
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-session-key-'));
  const databasePath = join(dir, 'gateway.db');
  let idp: IdentityProvider;
  let upstream: EchoUpstream;
  let port: number;
  let gw: TestGateway | undefined;
  const logged: string[] = [];

  /** (Re)starts the gateway on the same port and database, `env` on top; the previous one must be closed. */
  async function startGateway(env: Record<string, string> = {}): Promise<TestGateway> {
    gw = await startTestGateway(
      {
        PORT: String(port),
        DATABASE_PATH: databasePath,
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: CLIENT_SECRET,
        OIDC_SCOPES: 'openid profile email offline_access',
        SESSION_REVALIDATE: '1s',
        LOG_LEVEL: 'info',
        ...env,
      },
      { onLog: (line) => logged.push((JSON.parse(line) as { msg: string }).msg) },
    );
    return gw;
  }

  before(async () => {
    port = await freePort();
    upstream = await startEchoUpstream();
    const origin = `http://127.0.0.1:${port}`;
    idp = await startIdentityProvider({
      clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [`${origin}/auth/callback`], postLogoutRedirectUris: [`${origin}/`] }],
      users: [...DEMO_USERS, ...Object.values(USERS)],
      refreshTokens: true,
    });
    const first = await startGateway();
    await createService(first.origin, await signIn(first), { name: 'Staff', path: '/staff', targetUrl: upstream.origin, requireAuth: true, access: { groups: ['staff'] } });
  });

  after(async () => {
    await gw?.close();
    await idp?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function sessionOf(user: DemoUser): Promise<string> {
    const jar = new CookieJar();
    const login = await loginThroughProvider({ loginUrl: `${gw!.origin}/auth/login`, email: user.email, password: user.password, jar });
    assert.equal(login.status, 302, login.body);
    return `gw_session=${jar.get('gw_session', gw!.origin)}`;
  }

  async function staffStatus(cookie: string): Promise<number> {
    const response = await request(`${gw!.origin}/staff/x`, { headers: { cookie, accept: 'application/json' } });
    await response.body.dump();
    return response.statusCode;
  }

  /** Removes `user` from every group at the provider and waits for the gateway's 403 on the staff service. */
  async function removedFromStaff(user: DemoUser, cookie: string): Promise<void> {
    idp.setUserGroups(user.sub, []);
    await eventually('403 once the session is re-checked at the provider', async () => (await staffStatus(cookie)) === 403, 5_000, 100);
  }

  it('keeps the refresh token, sealed under a key it made and stored; a group removed at the provider → 403 within SESSION_REVALIDATE', async () => {
    assert.ok(logged.some((msg) => msg.startsWith('SESSION_ENCRYPTION_KEY is unset: generated a key')), 'the generated key is logged as such');
    const cookie = await sessionOf(USERS.groups);
    const [session] = await gw!.gateway.sessions.find({ sub: USERS.groups.sub });
    assert.ok(session?.refreshToken?.startsWith('v1.'), 'a sealed refresh token is kept');
    const stored = new BetterSqlite3(databasePath, { readonly: true });
    try {
      assert.deepEqual(stored.prepare('SELECT length(key) AS bytes, retired_at FROM session_encryption_key').all(), [{ bytes: 32, retired_at: null }]);
    } finally {
      stored.close();
    }
    assert.equal(await staffStatus(cookie), 200);
    await removedFromStaff(USERS.groups, cookie);
  });

  it('the stored key survives a restart, and still opens once SESSION_ENCRYPTION_KEY is set: a session from before is re-checked', async () => {
    const cookie = await sessionOf(USERS.restart);
    assert.equal(await staffStatus(cookie), 200);
    await gw!.close();
    await startGateway();
    assert.equal(await staffStatus(cookie), 200, 'the session lives on after the restart');
    await removedFromStaff(USERS.restart, cookie);

    idp.setUserGroups(USERS.restart.sub, ['staff']);
    await eventually('200 again once the group is back', async () => (await staffStatus(cookie)) === 200, 5_000, 100);
    await gw!.close();
    await startGateway({ SESSION_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    assert.ok(logged.some((msg) => msg.startsWith('SESSION_ENCRYPTION_KEY is set: the key stored in the database now only opens')));
    assert.equal(await staffStatus(cookie), 200);
    await removedFromStaff(USERS.restart, cookie);
  });
});

describe('a provider that issues no refresh token', () => {
  it('is said once in the log, not per sign-in, with how to get refresh tokens', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const env = await startGatewayWithProvider({ LOG_LEVEL: 'warn' }, { refreshTokens: true }, '127.0.0.1', (line) => lines.push(JSON.parse(line) as { level: number; msg: string }));
    try {
      for (let n = 0; n < 3; n++) assert.equal((await env.login('user@example.com')).status, 302);
      const notices = lines.filter((line) => line.msg.startsWith('the identity provider issued no refresh token'));
      assert.equal(notices.length, 1, JSON.stringify(lines));
      assert.match(notices[0]!.msg, /live their whole SESSION_TTL/);
      assert.match(notices[0]!.msg, /add offline_access to OIDC_SCOPES \("openid profile email offline_access"\)/);
      assert.equal(notices[0]!.level, 40, 'a warning');
    } finally {
      await env.close();
    }
  });
});
