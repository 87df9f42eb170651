/**
 * design.md §4.9 (the declarative registry, safe concurrent edits) checked through the admin API of
 * a running gateway, embedded or split, with real API tokens: export → apply round trips, dry runs
 * that leave the database as it was, bad documents that apply nothing, the guards, and 412 on a
 * stale If-Match. Not a test file itself: registry-api.test.ts and
 * test/split/split-registry-api.test.ts run it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';
import { assertError, bearer, createToken, type CreatedToken } from './api-token-checks.js';
import { defaultPool, documentEntry } from './pool-fields.js';

/** A session cookie and its CSRF token. */
type Credentials = { cookie: string; csrfToken: string };

/** The gateway under test, as the checks need it. */
export interface RegistryTarget {
  /** Where the admin API is served (the admin port). */
  adminUrl: string;
  /** The public listener of every data plane, each of which must route by an applied registry. */
  proxyUrls: string[];
  /** An admin session valid on {@link adminUrl}. */
  signIn(): Promise<Credentials>;
  /** Every row of the gateway's `services` and `audit_logs` tables, as text to compare. */
  dump(): string;
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNREACHABLE = 'http://127.0.0.1:9';

/** Runs every check against the gateway `start` gives, started once for all of them. */
export function checkRegistryApi(start: () => Promise<RegistryTarget>): void {
  let target: RegistryTarget;
  let admin: Credentials;
  let upstream: EchoUpstream;
  let write: CreatedToken;
  let read: CreatedToken;
  before(async () => {
    [target, upstream] = await Promise.all([start(), startEchoUpstream()]);
    admin = await target.signIn();
    write = await createToken(target.adminUrl, admin, { name: 'CI apply', scope: 'write' });
    read = await createToken(target.adminUrl, admin, { name: 'CI export', scope: 'read' });
  });
  after(async () => {
    await target?.close();
    await upstream?.close();
  });

  const call = (...args: Parameters<ReturnType<typeof apiClient>>) => apiClient(target.adminUrl)(...args);
  const asWrite = () => ({ authorization: bearer(write.secret) });
  const asRead = () => ({ authorization: bearer(read.secret) });
  /** Registers a service with the write token; resolves with it. */
  const create = async (fields: Record<string, unknown>) => {
    const created = await call('POST', '/api/services', { ...asWrite(), json: { requireAuth: false, ...fields } });
    assert.equal(created.status, 201, created.text);
    return created.json;
  };
  /** Deletes every service, so each check starts from an empty registry. */
  const clear = async () => {
    const applied = await call('POST', '/api/services/apply', { ...asWrite(), json: { version: 1, services: [] } });
    assert.equal(applied.status, 200, applied.text);
  };
  /** The status each proxy answers for `path`. */
  const statusesOf = (path: string) => Promise.all(target.proxyUrls.map((url) => statusOf(`${url}${path}`)));

  describe('the registry document', () => {
    it('export → dry run → apply → export: the dry run changes nothing, the apply reaches every proxy once audited, the second apply plans nothing', async () => {
      await clear();
      const kept = await create({ name: 'Kept', path: '/reg-kept', targetUrl: UNREACHABLE, description: 'stays' });
      const changed = await create({ name: 'Changed', path: '/reg-changed', targetUrl: UNREACHABLE });
      const removed = await create({ name: 'Removed', path: '/reg-removed', targetUrl: upstream.origin });
      await eventually('the services on every proxy', async () => (await statusesOf('/reg-removed/')).every((s) => s === 200));

      const exported = await call('GET', '/api/services/export', asRead());
      assert.equal(exported.status, 200, exported.text);
      const exportedServices: { path: string }[] = exported.json.services;
      assert.deepEqual(exported.json, { version: 1, services: [changed, kept, removed].map(documentEntry) });

      const document = {
        version: 1,
        services: [
          { name: 'New', path: '/reg-new', targetUrl: upstream.origin, requireAuth: false },
          ...exportedServices.filter((s) => s.path !== '/reg-removed').map((s) => (s.path === '/reg-changed' ? { ...s, targetUrl: upstream.origin, targets: [{ url: upstream.origin, weight: 1 }] } : s)),
        ],
      };
      const before = target.dump();
      const planned = await call('POST', '/api/services/apply?dryRun=true', { ...asWrite(), json: document });
      assert.equal(planned.status, 200, planned.text);
      const newService = { name: 'New', path: '/reg-new', targetUrl: upstream.origin, requireAuth: false, description: '', enabled: true, access: null, forwardAuthorization: false, ...defaultPool(upstream.origin) };
      const plan = {
        create: [{ path: '/reg-new', service: newService }],
        update: [{
          path: '/reg-changed',
          id: changed.id,
          name: 'Changed',
          changes: { targetUrl: { before: UNREACHABLE, after: upstream.origin }, targets: { before: [{ url: UNREACHABLE, weight: 1 }], after: [{ url: upstream.origin, weight: 1 }] } },
        }],
        delete: [{ path: '/reg-removed', id: removed.id, name: 'Removed' }],
        unchanged: ['/reg-kept'],
      };
      assert.deepEqual(planned.json, { dryRun: true, ...plan });
      assert.equal(target.dump(), before, 'a dry run leaves the database as it was');
      assert.deepEqual(await statusesOf('/reg-new/'), target.proxyUrls.map(() => 404));

      const applied = await call('POST', '/api/services/apply', { ...asWrite(), json: document });
      assert.equal(applied.status, 200, applied.text);
      assert.match(applied.json.create[0].id, UUID);
      const createdId: string = applied.json.create[0].id;
      assert.deepEqual(applied.json, { dryRun: false, ...plan, create: [{ ...plan.create[0], id: createdId }] });
      await eventually('the applied registry on every proxy', async () => {
        const [created, updated, deleted] = await Promise.all(['/reg-new/', '/reg-changed/', '/reg-removed/'].map(statusesOf));
        return [...created!, ...updated!].every((s) => s === 200) && deleted!.every((s) => s === 404);
      });

      const audit = (await call('GET', '/dashboard/logs?limit=3', asRead())).json.logs;
      assert.deepEqual(
        audit.map((e: { action: string; service_id: string; user_id: string }) => [e.action, e.service_id, e.user_id]),
        [['SERVICE_CREATED', createdId], ['SERVICE_UPDATED', changed.id], ['SERVICE_DELETED', removed.id]].map((e) => [...e, `token:${write.id}`]),
      );
      assert.deepEqual(JSON.parse(audit[1].details).changes, plan.update[0]!.changes);

      const again = await call('GET', '/api/services/export', asRead());
      const second = await call('POST', '/api/services/apply', { ...asWrite(), json: again.json });
      assert.deepEqual(second.json, { dryRun: false, create: [], update: [], delete: [], unchanged: ['/reg-changed', '/reg-kept', '/reg-new'] });
      assert.equal((await call('GET', '/dashboard/logs?limit=1', asRead())).json.logs[0].id, audit[0].id, 'nothing audited');
      assert.equal(kept.updatedAt, (await call('GET', `/api/services/${kept.id}`, asRead())).json.updatedAt);
    });

    it('a bad document: 400 naming each entry and field, and nothing applied, dry run or not', async () => {
      await clear();
      await create({ name: 'Present', path: '/reg-present', targetUrl: UNREACHABLE });
      const before = target.dump();
      const document = {
        version: 1,
        services: [
          { name: 'Fine', path: '/reg-fine', targetUrl: upstream.origin },
          { name: 'Bad', path: 'reg-bad', targetUrl: 'ftp://files' },
          { name: 'Again', path: '/REG-FINE', targetUrl: upstream.origin, access: { emails: ['nobody'] } },
        ],
      };
      for (const query of ['?dryRun=true', '', '?dryRun=false']) {
        const refused = await call('POST', `/api/services/apply${query}`, { ...asWrite(), json: document });
        assertError(
          refused,
          400,
          "Invalid registry document: services[1].path must start with /; services[1].targetUrl must be an absolute http:, https: or h2c: URL with a host; services[2].access.emails must be an email address (got \"nobody\")",
        );
        assert.deepEqual(refused.json.fields, {
          'services[1].path': 'must start with /',
          'services[1].targetUrl': 'must be an absolute http:, https: or h2c: URL with a host',
          'services[2].access.emails': 'must be an email address (got "nobody")',
        });
      }
      document.services.splice(1, 1);
      delete (document.services[1] as { access?: unknown }).access;
      assert.deepEqual((await call('POST', '/api/services/apply', { ...asWrite(), json: document })).json.fields, {
        'services[1].path': "is services[0]'s path too (paths are unique ignoring case)",
      });
      assertError(await call('POST', '/api/services/apply', { ...asWrite(), json: { version: 2, services: [] } }), 400, 'Invalid registry document: version must be 1');
      assertError(await call('POST', '/api/services/apply', { ...asWrite(), body: '{"version":1,', contentType: 'application/json' }), 400, 'Invalid JSON body');
      const dryRun = await call('POST', '/api/services/apply?dryRun=yes', { ...asWrite(), json: { version: 1, services: [] } });
      assertError(dryRun, 400, 'dryRun must be true or false');
      assert.deepEqual(dryRun.json.fields, { dryRun: 'must be true or false' });
      assert.equal(target.dump(), before);
    });

    it('export takes a read token; apply, a dry run too, a write token or a session with its CSRF token', async () => {
      const document = (await call('GET', '/api/services/export', asRead())).json;
      assert.equal(document.version, 1);
      for (const query of ['?dryRun=true', '']) {
        assertError(await call('POST', `/api/services/apply${query}`, { ...asRead(), json: document }), 403, 'Insufficient scope', 'Bearer error="insufficient_scope", scope="write"');
        assertError(await call('POST', `/api/services/apply${query}`, { as: admin, csrf: null, json: document }), 403, 'Invalid CSRF token');
        assertError(await call('POST', `/api/services/apply${query}`, { json: document }), 401, 'Not authenticated', 'Bearer');
        assert.equal((await call('POST', `/api/services/apply${query}`, { as: admin, json: document })).status, 200);
      }
      assertError(await call('GET', '/api/services/export'), 401, 'Not authenticated', 'Bearer');
      assert.equal((await call('GET', '/api/services/export', { as: admin })).status, 200);
      const wrongMethod = await call('POST', '/api/services/export', asWrite());
      assertError(wrongMethod, 405, 'Method not allowed');
      assert.equal(wrongMethod.headers.allow, 'GET, PUT, DELETE');
    });
  });

  describe('safe concurrent edits', () => {
    it('GET answers the ETag; PUT, toggle and DELETE with a stale If-Match get 412 and change nothing; a current one, * or none, go through', async () => {
      const service = await create({ name: 'Edited', path: '/reg-edited', targetUrl: UNREACHABLE });
      const path = `/api/services/${service.id}`;
      const first = await call('GET', path, asRead());
      assert.equal(first.headers.etag, '"1"');
      const mine = await call('PUT', path, { ...asWrite(), headers: { 'if-match': '"1"' }, json: { description: 'mine' } });
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.headers.etag, undefined, 'a PUT answers no validator (RFC 9110 §9.3.4)');
      const current = await call('GET', path, { as: admin });
      assert.equal(current.headers.etag, '"2"');

      const stale = { ...asWrite(), headers: { 'if-match': '"1"' } };
      assertError(await call('PUT', path, { ...stale, json: { description: 'theirs' } }), 412, 'Precondition failed');
      assertError(await call('PATCH', `${path}/toggle`, { ...stale, json: { enabled: false } }), 412, 'Precondition failed');
      assertError(await call('DELETE', path, stale), 412, 'Precondition failed');
      assertError(await call('PUT', path, { ...asWrite(), headers: { 'if-match': 'W/"2"' }, json: { description: 'weak' } }), 412, 'Precondition failed');
      assertError(await call('PUT', path, { as: admin, headers: { 'if-match': '"1"' }, json: { description: 'theirs' } }), 412, 'Precondition failed');
      assertError(await call('PUT', path, { ...asWrite(), headers: { 'if-match': '2' }, json: { description: 'unquoted' } }), 400, 'If-Match must be * or a list of entity tags, such as "3"');
      const after = await call('GET', path, asRead());
      assert.deepEqual([after.json, after.headers.etag], [current.json, '"2"'], 'nothing changed');

      assert.equal((await call('PATCH', `${path}/toggle`, { ...asWrite(), headers: { 'if-match': '"1", "2"' }, json: { enabled: false } })).status, 200);
      assert.equal((await call('PUT', path, { ...asWrite(), json: { description: 'no condition' } })).status, 200, 'without If-Match as before');
      assert.equal((await call('GET', path, asRead())).headers.etag, '"4"');
      assertError(await call('DELETE', `/api/services/${crypto.randomUUID()}`, { ...asWrite(), headers: { 'if-match': '*' } }), 404, 'Service not found');
      assert.equal((await call('DELETE', path, { ...asWrite(), headers: { 'if-match': '*' } })).status, 204);
    });

    it('an apply changes the version of what it updates, so an edit made before it gets 412', async () => {
      await clear();
      const service = await create({ name: 'Racing', path: '/reg-racing', targetUrl: UNREACHABLE });
      const { etag } = (await call('GET', `/api/services/${service.id}`, { as: admin })).headers as { etag: string };
      const document = (await call('GET', '/api/services/export', asRead())).json;
      document.services[0].description = 'from the repository';
      assert.equal((await call('POST', '/api/services/apply', { ...asWrite(), json: document })).status, 200);
      assertError(await call('PUT', `/api/services/${service.id}`, { as: admin, headers: { 'if-match': etag }, json: { name: 'Console edit' } }), 412, 'Precondition failed');
      assert.equal((await call('GET', `/api/services/${service.id}`, asRead())).json.description, 'from the repository');
    });
  });
}
