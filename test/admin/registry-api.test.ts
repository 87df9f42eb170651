/**
 * design.md §4.9 in the embedded gateway: the shared checks (registry-api-checks.ts) on the admin
 * port, with the public port's data plane routing by what is applied; then the size a document
 * may have.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_REGISTRY_DOCUMENT_BYTES } from '../../admin/http/request-body.js';
import { apiClient } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { assertError } from './api-token-checks.js';
import { checkRegistryApi } from './registry-api-checks.js';

describe('the declarative registry and conditional writes in the embedded gateway', () => {
  checkRegistryApi(async () => {
    const gw = await startTestGateway();
    const { db } = gw.gateway;
    return {
      adminUrl: gw.adminUrl,
      proxyUrls: [gw.origin],
      signIn: () => signIn(gw),
      dump: () => JSON.stringify([db.prepare('SELECT * FROM services ORDER BY id').all(), db.prepare('SELECT * FROM audit_logs ORDER BY id').all()]),
      close: () => gw.close(),
    };
  });
});

describe('a registry document’s size', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw?.close());

  it('may pass the 1 MiB of other bodies, up to 8 MiB: 413 beyond', async () => {
    const admin = await signIn(gw);
    const call = apiClient(gw.adminUrl);
    const entry = (i: number) => ({ name: `Service ${i}`, path: `/s${i}`, targetUrl: 'http://127.0.0.1:1', description: 'd'.repeat(1000) });
    const services = Array.from({ length: 3000 }, (_, i) => entry(i));
    const body = JSON.stringify({ version: 1, services });
    assert.ok(body.length > 3 * 1024 * 1024);
    const planned = await call('POST', '/api/services/apply?dryRun=true', { as: admin, body, contentType: 'application/json' });
    assert.equal(planned.status, 200, planned.text.slice(0, 200));
    assert.equal(planned.json.create.length, 3000);
    const padding = ' '.repeat(MAX_REGISTRY_DOCUMENT_BYTES - body.length + 1);
    assertError(await call('POST', '/api/services/apply?dryRun=true', { as: admin, body: body + padding, contentType: 'application/json' }), 413, 'Request body too large');
    assertError(await call('PUT', `/api/services/${crypto.randomUUID()}`, { as: admin, body: JSON.stringify({ description: 'd'.repeat(1024 * 1024) }), contentType: 'application/json' }), 413, 'Request body too large');
  });
});
