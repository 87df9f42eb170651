/**
 * design.md §4.8 (admin API tokens) checked against a running gateway, embedded or split: scopes,
 * expiry, revocation, the audit actor, and the CSRF exemption that only a bearer token gets. Not a
 * test file itself: api-tokens.test.ts and test/split/split-api-tokens.test.ts run it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { Database } from '../../admin/database.js';
import type { SessionUser } from '../../shared/types.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';

/** A session cookie and its CSRF token. */
type Credentials = { cookie: string; csrfToken: string };

/** The gateway under test, as the checks need it. */
export interface TokenTarget {
  /** Origins that serve the admin API (the admin port first); every check of a token runs on each. */
  apiUrls: string[];
  /** A session valid on every one of {@link apiUrls}; an admin unless `user` says otherwise. */
  signIn(user?: Partial<SessionUser>): Promise<Credentials>;
  /** Makes a token's expiry a moment ago, in the gateway's database (no token can be made that short). */
  expire(tokenId: string): void;
  close(): Promise<void>;
}

/** A token as POST /api/tokens answers it. */
export interface CreatedToken {
  id: string;
  name: string;
  scope: 'read' | 'write';
  secret: string;
}

export const bearer = (secret: string): string => `Bearer ${secret}`;

/** Sets a token's expiry a moment ago, straight in the gateway's database `db`. */
export function expireToken(db: Database, tokenId: string): void {
  const { changes } = db.prepare('UPDATE api_tokens SET expires_at = ? WHERE id = ?').run(Date.now() - 1, tokenId);
  assert.equal(changes, 1, `no token ${tokenId}`);
}

/** Creates a token through `url`'s API as `admin`; throws unless it answers 201. */
export async function createToken(url: string, admin: Credentials, body: Record<string, unknown>): Promise<CreatedToken> {
  const response = await apiClient(url)('POST', '/api/tokens', { as: admin, json: body });
  if (response.status !== 201) throw new Error(`creating a token: ${response.status} ${response.text}`);
  return response.json;
}

export function assertError(response: ApiResponse, status: number, error: string, challenge?: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.json?.error, error, response.text);
  assert.equal(response.headers['www-authenticate'], challenge);
}

const INVALID_TOKEN = 'Bearer error="invalid_token"';
const INSUFFICIENT_SCOPE = 'Bearer error="insufficient_scope", scope="write"';
/** The admin API's JSON reads, which a `read` token may make. */
const READS = ['/api/services', '/dashboard/stats', '/dashboard/logs', '/dashboard/traffic'];

/** Runs every check against the gateway `start` gives, started once for all of them. */
export function checkApiTokens(start: () => Promise<TokenTarget>): void {
  let target: TokenTarget;
  let admin: Credentials;
  let counter = 0;
  before(async () => {
    target = await start();
    admin = await target.signIn();
  });
  after(() => target?.close());

  const adminPort = () => target.apiUrls[0]!;
  const token = (scope: 'read' | 'write', name = `${scope} token ${++counter}`) => createToken(adminPort(), admin, { name, scope });
  const newService = () => ({ name: `Tokened ${++counter}`, path: `/tokened-${counter}`, targetUrl: 'http://127.0.0.1:9' });
  const auditLog = async () => (await apiClient(adminPort())('GET', '/dashboard/logs?limit=1000', { as: admin })).json.logs as { action: string; user_id: string; service_id: string | null; details: string }[];

  describe('a write token', () => {
    it('makes every admin API call without a session or CSRF token, audited as token:<id>', async () => {
      const write = await token('write');
      for (const url of target.apiUrls) {
        const call = apiClient(url);
        const auth = { authorization: bearer(write.secret) };
        const created = await call('POST', '/api/services', { ...auth, json: newService() });
        assert.equal(created.status, 201, `${url}: ${created.text}`);
        const id = created.json.id;
        assert.equal((await call('PUT', `/api/services/${id}`, { ...auth, json: { description: 'by a token' } })).status, 200);
        assert.equal((await call('PATCH', `/api/services/${id}/toggle`, { ...auth, json: { enabled: false } })).status, 200);
        assert.equal((await call('GET', `/api/services/${id}/logs`, auth)).status, 200);
        assert.equal((await call('POST', '/api/assertion-keys/rotate', auth)).status, 200);
        assert.equal((await call('DELETE', `/api/services/${id}`, auth)).status, 204);
        for (const path of READS) assert.equal((await call('GET', path, auth)).status, 200, path);
        assert.equal((await call('GET', '/api/services', { authorization: `bEaReR  ${write.secret}` })).status, 200, 'the scheme in any case (RFC 9110 §11.1)');
        const entries = (await auditLog()).filter((entry) => entry.service_id === id || entry.action === 'ASSERTION_KEY_ROTATED');
        assert.deepEqual(
          entries.slice(0, 5).map((entry) => [entry.action, entry.user_id]),
          ['SERVICE_DELETED', 'ASSERTION_KEY_ROTATED', 'SERVICE_DISABLED', 'SERVICE_UPDATED', 'SERVICE_CREATED'].map((action) => [action, `token:${write.id}`]),
          url,
        );
      }
    });

    it('is used rather than a session cookie sent with it', async () => {
      const write = await token('write');
      const member = await target.signIn({ sub: 'member-sub', isAdmin: false });
      const created = await apiClient(adminPort())('POST', '/api/services', { as: member, authorization: bearer(write.secret), json: newService() });
      assert.equal(created.status, 201, 'a non-admin cookie does not get in the way');
      const [entry] = await auditLog();
      assert.deepEqual([entry!.action, entry!.user_id], ['SERVICE_CREATED', `token:${write.id}`]);
    });
  });

  describe('a read token', () => {
    it('may GET the admin API and nothing else: 403 Insufficient scope (RFC 6750 §3.1)', async () => {
      const read = await token('read');
      const write = await token('write');
      const service = (await apiClient(adminPort())('POST', '/api/services', { authorization: bearer(write.secret), json: newService() })).json;
      for (const url of target.apiUrls) {
        const call = apiClient(url);
        const auth = { authorization: bearer(read.secret) };
        for (const path of [...READS, `/api/services/${service.id}`, `/api/services/${service.id}/logs`]) {
          assert.equal((await call('GET', path, auth)).status, 200, `${url}${path}`);
        }
        const head = await request(`${url}/api/services`, { method: 'HEAD', headers: auth });
        await head.body.dump();
        assert.equal(head.statusCode, 200, 'HEAD is a read');
        const writes: [string, string, unknown][] = [
          ['POST', '/api/services', newService()],
          ['PUT', `/api/services/${service.id}`, { name: 'Renamed' }],
          ['PATCH', `/api/services/${service.id}/toggle`, { enabled: false }],
          ['DELETE', `/api/services/${service.id}`, undefined],
          ['POST', '/api/assertion-keys/rotate', undefined],
        ];
        for (const [method, path, json] of writes) {
          assertError(await call(method, path, { ...auth, json }), 403, 'Insufficient scope', INSUFFICIENT_SCOPE);
          // An admin session and its CSRF token beside it change nothing: the bearer token is what acts.
          assertError(await call(method, path, { ...auth, json, as: admin }), 403, 'Insufficient scope', INSUFFICIENT_SCOPE);
        }
      }
      const unchanged = await apiClient(adminPort())('GET', `/api/services/${service.id}`, { as: admin });
      assert.deepEqual(unchanged.json, service);
    });
  });

  describe('the CSRF token', () => {
    it('is still required of a session cookie, with or without another Authorization scheme; only a bearer token is exempt', async () => {
      const call = apiClient(adminPort());
      assertError(await call('POST', '/api/services', { as: admin, csrf: null, json: newService() }), 403, 'Invalid CSRF token');
      assertError(await call('POST', '/api/services', { as: admin, csrf: 'wrong', json: newService() }), 403, 'Invalid CSRF token');
      const basic = `Basic ${Buffer.from('admin:password').toString('base64')}`;
      assertError(await call('POST', '/api/services', { as: admin, csrf: null, authorization: basic, json: newService() }), 403, 'Invalid CSRF token');
      assertError(await call('POST', '/api/tokens', { as: admin, csrf: null, json: { name: 'no csrf', scope: 'read' } }), 403, 'Invalid CSRF token');
      const write = await token('write');
      assert.equal((await call('POST', '/api/services', { authorization: bearer(write.secret), csrf: null, json: newService() })).status, 201);
    });
  });

  describe('a bearer credential that is no live token', () => {
    it('401 Not authenticated with WWW-Authenticate: Bearer error="invalid_token", even beside an admin session', async () => {
      const expired = await token('write');
      target.expire(expired.id);
      const revoked = await token('write');
      assert.equal((await apiClient(adminPort())('DELETE', `/api/tokens/${revoked.id}`, { as: admin })).status, 204);
      const credentials = [
        bearer(expired.secret),
        bearer(revoked.secret),
        bearer(`ght_${'A'.repeat(43)}`),
        bearer(revoked.secret.slice(0, -1)),
        bearer(revoked.secret.slice(4)),
        bearer('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'),
        'Bearer',
        `bearer ${expired.secret}`,
      ];
      for (const url of target.apiUrls) {
        const call = apiClient(url);
        for (const authorization of credentials) {
          assertError(await call('GET', '/api/services', { authorization }), 401, 'Not authenticated', INVALID_TOKEN);
          assertError(await call('POST', '/api/services', { authorization, as: admin, json: newService() }), 401, 'Not authenticated', INVALID_TOKEN);
          assertError(await call('GET', '/api/tokens', { authorization, as: admin }), 401, 'Not authenticated', INVALID_TOKEN);
        }
      }
    });

    it('without any credential: 401 with WWW-Authenticate: Bearer (RFC 6750 §3)', async () => {
      assertError(await apiClient(adminPort())('GET', '/dashboard/stats'), 401, 'Not authenticated', 'Bearer');
    });
  });

  describe('the token endpoints', () => {
    it('take no token: 403 Tokens cannot manage tokens, even beside an admin session', async () => {
      const write = await token('write');
      const victim = await token('read');
      for (const url of target.apiUrls) {
        const call = apiClient(url);
        const auth = { authorization: bearer(write.secret) };
        assertError(await call('GET', '/api/tokens', auth), 403, 'Tokens cannot manage tokens');
        assertError(await call('POST', '/api/tokens', { ...auth, json: { name: 'minted', scope: 'write' } }), 403, 'Tokens cannot manage tokens');
        assertError(await call('DELETE', `/api/tokens/${victim.id}`, auth), 403, 'Tokens cannot manage tokens');
        assertError(await call('POST', '/api/tokens', { ...auth, as: admin, json: { name: 'minted', scope: 'write' } }), 403, 'Tokens cannot manage tokens');
      }
      const names = (await apiClient(adminPort())('GET', '/api/tokens', { as: admin })).json.map((t: { name: string }) => t.name);
      assert.ok(names.includes(victim.name) && !names.includes('minted'));
    });

    it('need an admin session: 401 without one, 403 for a non-admin', async () => {
      const call = apiClient(adminPort());
      const member = await target.signIn({ sub: 'member-sub', isAdmin: false });
      assertError(await call('GET', '/api/tokens'), 401, 'Not authenticated');
      assertError(await call('GET', '/api/tokens', { as: member }), 403, 'Admin access required');
      assertError(await call('POST', '/api/tokens', { as: member, json: { name: 'x', scope: 'read' } }), 403, 'Admin access required');
    });

    it('create, list and revoke, each audited with the admin as actor; a revoked token stops at once', async () => {
      const call = apiClient(adminPort());
      const created = await call('POST', '/api/tokens', { as: admin, json: { name: ' CI deploy ', scope: 'write', expiresInDays: 30 } });
      assert.equal(created.status, 201, created.text);
      const { secret, ...shown } = created.json;
      assert.match(secret, /^ght_[A-Za-z0-9_-]{43}$/);
      assert.equal(shown.name, 'CI deploy');
      assert.equal(shown.createdBy, 'admin-sub');
      const listed = (await call('GET', '/api/tokens', { as: admin })).json.find((t: { id: string }) => t.id === shown.id);
      assert.deepEqual(listed, shown, 'listed as created, without the secret');
      assert.equal((await call('GET', '/api/services', { authorization: bearer(secret) })).status, 200);

      assert.equal((await call('DELETE', `/api/tokens/${shown.id}`, { as: admin })).status, 204);
      for (const url of target.apiUrls) {
        assertError(await apiClient(url)('GET', '/api/services', { authorization: bearer(secret) }), 401, 'Not authenticated', INVALID_TOKEN);
      }
      assert.equal((await call('GET', '/api/tokens', { as: admin })).json.some((t: { id: string }) => t.id === shown.id), false);
      assertError(await call('DELETE', `/api/tokens/${shown.id}`, { as: admin }), 404, 'Token not found');
      assertError(await call('DELETE', '/api/tokens/not-a-uuid', { as: admin }), 404, 'Token not found');

      const [revocation, creation] = (await auditLog()).filter((entry) => entry.action.startsWith('TOKEN_') && JSON.parse(entry.details).token.id === shown.id);
      const details = { id: shown.id, name: 'CI deploy', scope: 'write', expiresAt: shown.expiresAt };
      assert.deepEqual([revocation!.action, revocation!.user_id, JSON.parse(revocation!.details)], ['TOKEN_REVOKED', 'admin-sub', { token: details }]);
      assert.deepEqual([creation!.action, creation!.user_id, JSON.parse(creation!.details)], ['TOKEN_CREATED', 'admin-sub', { token: details }]);
    });
  });
}
