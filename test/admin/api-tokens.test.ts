/**
 * design.md §4.8 in the embedded gateway: the shared checks (api-token-checks.ts) on the admin port
 * and the public port, then what only one process shows: the bodies POST /api/tokens takes, what
 * the database keeps, `lastUsedAt`, where tokens are not taken, the rate limit and the console.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { assertError, bearer, checkApiTokens, createToken, expireToken } from './api-token-checks.js';

const DAY_MS = 24 * 60 * 60_000;

describe('admin API tokens in the embedded gateway (admin port and public port)', () => {
  checkApiTokens(async () => {
    const gw = await startTestGateway();
    return {
      apiUrls: [gw.adminUrl, gw.origin],
      signIn: (user) => signIn(gw, user),
      expire: (tokenId) => expireToken(gw.gateway.db, tokenId),
      close: () => gw.close(),
    };
  });
});

describe('one embedded gateway', () => {
  const env = useAdminSession({ api: 'admin' });

  describe('POST /api/tokens bodies', () => {
    it('400 naming every missing, invalid or unknown field', async () => {
      const empty = await env.call('POST', '/api/tokens', { as: env.admin, json: {} });
      assertError(empty, 400, 'Invalid API token: name is required; scope is required');
      assert.deepEqual(empty.json.fields, { name: 'is required', scope: 'is required' });
      const bad = await env.call('POST', '/api/tokens', { as: env.admin, json: { name: ' ', scope: 'admin', expiresInDays: 7, secret: 'mine' } });
      assertError(bad, 400, 'Invalid API token: name must not be empty; scope must be read, write or write sessions; expiresInDays must be 30, 90, 365 or null. Unknown fields: secret');
      assert.deepEqual(bad.json.fields, {
        name: 'must not be empty',
        scope: 'must be read, write or write sessions',
        expiresInDays: 'must be 30, 90, 365 or null',
        secret: 'unknown field',
      });
      const long = await env.call('POST', '/api/tokens', { as: env.admin, json: { name: 'n'.repeat(101), scope: 'read', expiresInDays: '90' } });
      assert.deepEqual(long.json.fields, { name: 'must be at most 100 characters', expiresInDays: 'must be 30, 90, 365 or null' });
      assertError(await env.call('POST', '/api/tokens', { as: env.admin, json: [] }), 400, 'Body must be a JSON object');
      assertError(await env.call('POST', '/api/tokens', { as: env.admin, body: 'name=x', contentType: 'application/x-www-form-urlencoded' }), 415, 'Content-Type must be application/json');
      assert.deepEqual((await env.call('GET', '/api/tokens', { as: env.admin })).json, [], 'nothing was created');
    });

    it('expires after 30, 90 (the default) or 365 days, or never (null)', async () => {
      for (const [expiresInDays, days] of [[30, 30], [undefined, 90], [365, 365], [null, null]] as const) {
        const created = await createToken(env.gw.adminUrl, env.admin, { name: `lifetime ${days}`, scope: 'read', expiresInDays });
        const response = (await env.call('GET', '/api/tokens', { as: env.admin })).json.find((t: { id: string }) => t.id === created.id);
        const expected = days === null ? null : new Date(Date.parse(response.createdAt) + days * DAY_MS).toISOString();
        assert.equal(response.expiresAt, expected, `expiresInDays ${expiresInDays}`);
        assert.equal(response.lastUsedAt, null);
      }
    });
  });

  describe('what the gateway keeps', () => {
    it('only the secret’s SHA-256: the secret is in no table, and no answer after the first shows it', async () => {
      const created = await createToken(env.gw.adminUrl, env.admin, { name: 'kept', scope: 'write' });
      const row = env.gw.gateway.db.prepare('SELECT * FROM api_tokens WHERE id = ?').get(created.id) as Record<string, unknown>;
      assert.equal(row.secret_hash, createHash('sha256').update(created.secret).digest('hex'));
      const randomPart = created.secret.slice('ght_'.length);
      for (const table of ['api_tokens', 'audit_logs']) {
        const dump = JSON.stringify(env.gw.gateway.db.prepare(`SELECT * FROM ${table}`).all());
        assert.ok(!dump.includes(randomPart), `${table} holds the secret`);
      }
      const listed = (await env.call('GET', '/api/tokens', { as: env.admin })).json;
      assert.ok(!JSON.stringify(listed).includes(randomPart));
      assert.deepEqual(Object.keys(listed[0]).sort(), ['createdAt', 'createdBy', 'expiresAt', 'id', 'lastUsedAt', 'name', 'scope']);
    });

    it('lastUsedAt: set by a request, written at most once a minute', async () => {
      const created = await createToken(env.gw.adminUrl, env.admin, { name: 'used', scope: 'read' });
      const lastUsed = () => (env.gw.gateway.db.prepare('SELECT last_used_at FROM api_tokens WHERE id = ?').get(created.id) as { last_used_at: number | null }).last_used_at;
      const use = async () => assert.equal((await env.call('GET', '/dashboard/stats', { authorization: bearer(created.secret) })).status, 200);
      const before = Date.now();
      await use();
      const first = lastUsed();
      assert.ok(first !== null && first >= before && first <= Date.now());
      await use();
      await use();
      assert.equal(lastUsed(), first, 'no write per request');
      env.gw.gateway.db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?').run(first - 60_000, created.id);
      await use();
      assert.ok(lastUsed()! >= first, 'a minute later, the next request is recorded');
      const listed = (await env.call('GET', '/api/tokens', { as: env.admin })).json.find((t: { id: string }) => t.id === created.id);
      assert.equal(listed.lastUsedAt, new Date(lastUsed()!).toISOString());
    });
  });

  describe('where a token is not taken', () => {
    it('console pages and the session endpoints ignore it: it is no session', async () => {
      const write = await createToken(env.gw.adminUrl, env.admin, { name: 'not for pages', scope: 'write' });
      const authorization = bearer(write.secret);
      for (const path of ['/dashboard', '/dashboard/tokens', '/dashboard/audit']) {
        const page = await env.call('GET', path, { authorization });
        assert.equal(page.status, 302, path);
        assert.match(String(page.headers.location), /^\/auth\/login-page\?returnTo=/);
      }
      assertError(await env.call('GET', '/auth/profile', { authorization }), 401, 'Not authenticated');
      assertError(await env.call('GET', '/auth/csrf-token', { authorization }), 401, 'Not authenticated');
    });
  });

  describe('the console', () => {
    it('/dashboard/tokens lists the tokens without their secrets, marking expired ones', async () => {
      await createToken(env.gw.adminUrl, env.admin, { name: 'Nightly <backup>', scope: 'read', expiresInDays: null });
      const expired = await createToken(env.gw.adminUrl, env.admin, { name: 'Old deploy', scope: 'write' });
      expireToken(env.gw.gateway.db, expired.id);
      const page = await env.call('GET', '/dashboard/tokens', { as: env.admin });
      assert.equal(page.status, 200);
      assert.match(page.text, /<a href="\/dashboard\/tokens" aria-current="page">API tokens<\/a>/);
      assert.match(page.text, /Nightly &lt;backup&gt;/);
      assert.doesNotMatch(page.text, /ght_[A-Za-z0-9_-]{43}/);
      const row = (name: string) => page.text.match(new RegExp(`<tr>\\s*<th scope="row" data-label="Name" class="wrap">${name}[\\s\\S]*?</tr>`))?.[0] ?? '';
      assert.match(row('Old deploy'), /Expired/);
      assert.match(row('Old deploy'), new RegExp(`data-revoke-token data-id="${expired.id}"`));
      assert.match(row('Nightly &lt;backup&gt;'), /<td data-label="Expires">Never<\/td>/);
      assert.match(row('Nightly &lt;backup&gt;'), /<code>admin-sub<\/code>/);
      assert.doesNotMatch(row('Nightly &lt;backup&gt;'), /Expired/);
    });

    it('the audit log names a token as the actor of what it did', async () => {
      const write = await createToken(env.gw.adminUrl, env.admin, { name: 'Terraform', scope: 'write' });
      const created = await env.call('POST', '/api/services', { authorization: bearer(write.secret), json: { name: 'By Terraform', path: '/by-terraform', targetUrl: 'http://127.0.0.1:9' } });
      assert.equal(created.status, 201);
      const page = await env.call('GET', '/dashboard/audit', { as: env.admin });
      const rows = page.text.match(/<tr>[\s\S]*?<\/tr>/g) ?? [];
      const creation = rows.find((row) => row.includes('Service created') && row.includes('By Terraform')) ?? '';
      assert.match(creation, new RegExp(`API token “Terraform”<br><code class="muted">token:${write.id}</code>`));
      const minted = rows.find((row) => row.includes('API token created') && row.includes('“Terraform”')) ?? '';
      assert.match(minted, /<td data-label="Who"><a href="\/dashboard\/sessions\?user=admin-sub"[^>]*><code>admin-sub<\/code><\/a><\/td>/);
      assert.match(minted, /“Terraform”, write, expires <time/);
    });
  });
});

describe('with ADMIN_URL set', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ ADMIN_URL: 'http://admin.gateway.test' });
  });
  after(() => gw?.close());

  it('a token works on the admin port; the public port serves no admin API, token or not', async () => {
    const admin = await signIn(gw, {}, 'admin');
    const read = await createToken(gw.adminUrl, admin, { name: 'admin origin', scope: 'read' });
    assert.equal((await apiClient(gw.adminUrl)('GET', '/api/services', { authorization: bearer(read.secret) })).status, 200);
    const onPublic = await apiClient(gw.origin)('GET', '/api/services', { authorization: bearer(read.secret) });
    assertError(onPublic, 404, 'Service not found');
  });
});

describe('the general rate limit', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_GENERAL: '3/15m' });
  });
  after(() => gw?.close());

  it('counts requests with a bearer credential that is no live token, not those of a live token', async () => {
    const admin = await signIn(gw);
    const read = await createToken(gw.adminUrl, admin, { name: 'automation', scope: 'read' });
    const call = apiClient(gw.adminUrl);
    const unknown = bearer(`ght_${'B'.repeat(43)}`);
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', '/api/services', { authorization: unknown })).status, 401);
    assertError(await call('GET', '/api/services', { authorization: unknown }), 429, 'Too many requests, please try again later');
    for (let i = 0; i < 10; i++) assert.equal((await call('GET', '/api/services', { authorization: bearer(read.secret) })).status, 200, `request ${i + 1}`);
  });
});
