/**
 * design.md §4.10 in split mode: the admin process serves the API's OpenAPI description, a proxy
 * process hands the same document on (ADMIN_URL unset), and real answers of the admin API through
 * the proxy (services, the registry document, ETag and If-Match) match it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, createToken } from '../admin/api-token-checks.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';

describe('the OpenAPI description in split mode (admin process, proxy processes, Redis)', () => {

  const env = useAdminSession({ topology: 'split', upstream: true, admin: false });

  it('is the same document on the admin port and through a proxy, and the answers through the proxy match it', async () => {
    const fromAdmin = await apiClient(env.split.adminUrl)('GET', '/api/openapi.json');
    const fromProxy = await apiClient(env.split.proxies[0].url)('GET', '/api/openapi.json');
    assert.equal(fromAdmin.status, 200, fromAdmin.text);
    assert.deepEqual(fromProxy.json, fromAdmin.json);

    const call = checkedApiClient(env.split.proxies[0].url, new OpenApiChecker(fromAdmin.json));
    const admin = await env.split.signIn({ isAdmin: true });
    const created = await call('POST', '/api/services', { as: admin, json: { name: 'Echo', path: '/echo', targetUrl: env.upstream.origin } });
    assert.equal(created.status, 201, created.text);
    const token = await createToken(env.split.adminUrl, admin, { name: 'ci', scope: 'write', expiresInDays: 30 });
    const authorization = bearer(token.secret);

    const one = await call('GET', `/api/services/${created.json.id}`, { authorization });
    assert.equal(one.status, 200);
    const stale = await call('PUT', `/api/services/${created.json.id}`, { authorization, headers: { 'if-match': '"999"' }, json: { name: 'Stale' } });
    assert.equal(stale.status, 412);
    const exported = await call('GET', '/api/services/export', { authorization });
    assert.equal(exported.status, 200);
    const plan = await call('POST', '/api/services/apply?dryRun=true', { authorization, json: exported.json });
    assert.deepEqual(plan.json.unchanged, ['/echo']);
    assert.equal((await call('GET', '/api/services', { authorization })).status, 200);
  });
});
