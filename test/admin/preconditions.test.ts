/**
 * design.md §4.9, safe concurrent edits: reading If-Match (RFC 9110 §13.1.1), and the registry's
 * versions and conditional writes (the check and the write in one transaction).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AuditLog, type Actor } from '../../admin/audit-log.js';
import { openDatabase } from '../../admin/database.js';
import { MIGRATIONS } from '../../admin/migrations.js';
import { ifMatchHolds, parseIfMatch } from '../../admin/http/preconditions.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { GatewayError, type ErrorCode } from '../../shared/errors.js';
import { databaseAtVersion, tempRegistry, type TempRegistry } from '../support/temp-registry.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };

describe('parseIfMatch', () => {
  it('no field: no condition; * : any current representation', () => {
    assert.equal(parseIfMatch(undefined), null);
    assert.equal(parseIfMatch('*'), '*');
    assert.equal(parseIfMatch(' * '), '*');
  });

  it('a list of entity tags, weak ones dropped (If-Match compares strongly), empty elements allowed', () => {
    assert.deepEqual(parseIfMatch('"3"'), ['"3"']);
    assert.deepEqual(parseIfMatch('"1", W/"2" ,"3"'), ['"1"', '"3"']);
    assert.deepEqual(parseIfMatch(' , "1",,'), ['"1"']);
    assert.deepEqual(parseIfMatch('"a,b"'), ['"a,b"'], 'a comma inside a tag is part of it');
    assert.deepEqual(parseIfMatch('""'), ['""']);
    assert.deepEqual(parseIfMatch('W/"3"'), [], 'holds for nothing');
    assert.deepEqual(parseIfMatch('"1", "2"'), ['"1"', '"2"'], 'two fields as Node joins them');
  });

  it('anything else is 400, not silently no condition', () => {
    for (const value of ['', ' ', ',', '3', '"3', '3"', '"1" "2"', 'w/"3"', '*, "1"', '"a"b"', '"tab\tinside"']) {
      assert.throws(() => parseIfMatch(value), (error) => {
        assert.ok(error instanceof GatewayError);
        assert.equal(error.status, 400);
        assert.equal(error.message, 'If-Match must be * or a list of entity tags, such as "3"');
        return true;
      }, JSON.stringify(value));
    }
  });

  it('holds without a condition, for *, and when a listed tag is the current one, exactly', () => {
    assert.equal(ifMatchHolds(null, '"2"'), true);
    assert.equal(ifMatchHolds('*', '"2"'), true);
    assert.equal(ifMatchHolds(['"1"', '"2"'], '"2"'), true);
    assert.equal(ifMatchHolds(['"1"'], '"2"'), false);
    assert.equal(ifMatchHolds([], '"2"'), false);
    assert.equal(ifMatchHolds(parseIfMatch('W/"2"'), '"2"'), false);
  });
});

describe('the registry: versions and conditional writes', () => {
  let t: TempRegistry;
  let id: string;
  beforeEach(async () => {
    t = tempRegistry('gatehouse-preconditions-');
    id = (await t.registry.create({ name: 'Orders', path: '/orders', targetUrl: 'http://orders:1' }, actor)).id;
  });
  afterEach(() => t.close());

  const etag = () => t.registry.getTagged(id).etag;
  const auditCount = () => t.db.prepare('SELECT count(*) AS n FROM audit_logs').pluck().get();
  const rejectsWith = (promise: Promise<unknown>, code: ErrorCode) =>
    assert.rejects(promise, (error) => error instanceof GatewayError && error.code === code);

  it('a service starts at "1" and every change adds one: an edit, a toggle; a write that changes nothing does not', async () => {
    assert.equal(etag(), '"1"');
    await t.registry.update(id, { description: 'v2' }, actor);
    assert.equal(etag(), '"2"');
    await t.registry.setEnabled(id, { enabled: false }, actor);
    assert.equal(etag(), '"3"');
    await t.registry.update(id, { description: 'v2' }, actor);
    await t.registry.setEnabled(id, { enabled: false }, actor);
    assert.equal(etag(), '"3"');
    assert.deepEqual(t.registry.etags(), new Map([[id, '"3"']]));
  });

  it('PUT, toggle and DELETE with a stale ETag: 412, nothing changed or audited; with the current one, *, or a list holding it: done', async () => {
    const stale = parseIfMatch('"1"');
    await t.registry.update(id, { description: 'changed by someone else' }, actor);
    const service = t.registry.get(id);
    const audited = auditCount();
    await rejectsWith(t.registry.update(id, { name: 'Mine' }, actor, stale), 'PRECONDITION_FAILED');
    await rejectsWith(t.registry.setEnabled(id, { enabled: false }, actor, stale), 'PRECONDITION_FAILED');
    await rejectsWith(t.registry.remove(id, actor, stale), 'PRECONDITION_FAILED');
    await rejectsWith(t.registry.update(id, { name: 'Mine' }, actor, parseIfMatch('W/"2"')), 'PRECONDITION_FAILED');
    assert.deepEqual(t.registry.get(id), service);
    assert.equal(auditCount(), audited);

    await t.registry.update(id, { name: 'Mine' }, actor, parseIfMatch('"2"'));
    await t.registry.setEnabled(id, { enabled: false }, actor, parseIfMatch('"1", "3"'));
    await t.registry.setEnabled(id, { enabled: true }, actor, parseIfMatch('*'));
    assert.equal(etag(), '"5"');
    await t.registry.remove(id, actor, parseIfMatch(etag()));
    assert.deepEqual(t.registry.list(), []);
  });

  it('a missing service is 404 before any condition; the condition comes before the body is validated', async () => {
    await rejectsWith(t.registry.update(crypto.randomUUID(), { name: 'x' }, actor, parseIfMatch('"1"')), 'SERVICE_NOT_FOUND');
    await rejectsWith(t.registry.remove('not-a-uuid', actor, '*'), 'SERVICE_NOT_FOUND');
    await rejectsWith(t.registry.update(id, { name: '' }, actor, parseIfMatch('"9"')), 'PRECONDITION_FAILED');
    await rejectsWith(t.registry.update(id, { name: '' }, actor, parseIfMatch('"1"')), 'BAD_REQUEST');
  });

  it('a database made before versions: its services start at "1"', () => {
    const old = join(t.dir, 'old.db');
    const beforeVersions = MIGRATIONS.findIndex((migration) => migration.includes('ADD COLUMN version'));
    const legacyId = databaseAtVersion(old, beforeVersions, 'http://localhost:1');
    const migrated = openDatabase(old);
    try {
      assert.equal(new ServiceRegistry(migrated, new AuditLog(migrated), new MemoryEventBus()).getTagged(legacyId).etag, '"1"');
    } finally {
      migrated.close();
    }
  });
});
