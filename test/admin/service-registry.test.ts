import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { AuditLog, type Actor, type AuditRecord } from '../../admin/audit-log.js';
import { openDatabase } from '../../admin/database.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { GatewayError, type ErrorCode } from '../../shared/errors.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import { defaultPool } from './pool-fields.js';
import { databaseAtVersion, tempRegistry, type TempRegistry } from '../support/temp-registry.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };
const orders = { name: 'Orders', path: '/orders', targetUrl: 'http://localhost:3000' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TempRegistry;
beforeEach(() => {
  t = tempRegistry('gatehouse-registry-');
});
afterEach(() => t.close());

/** Every audit record, oldest first. */
function auditTrail(): AuditRecord[] {
  return t.audit.list(1000, 0).logs.reverse();
}

function auditCount(): number {
  return t.audit.list(1, 0).total;
}

/** Asserts the promise rejects with a GatewayError of `code`. */
async function rejectsWith(promise: Promise<unknown>, code: ErrorCode, message?: string): Promise<void> {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  });
}

/** Makes every audit insert fail, so a write fails after its row change inside the transaction. */
function breakAuditLog(): void {
  t.db.exec("CREATE TRIGGER audit_down BEFORE INSERT ON audit_logs BEGIN SELECT RAISE(ABORT, 'audit down'); END");
}

describe('ServiceRegistry.create', () => {
  it('returns the stored service with a UUID, enabled, equal ISO timestamps and defaults', async () => {
    const before = Date.now();
    const service = await t.registry.create({ ...orders, name: ' Orders ' }, actor);
    assert.match(service.id, UUID);
    assert.deepEqual(service, {
      id: service.id,
      name: 'Orders',
      path: '/orders',
      targetUrl: 'http://localhost:3000',
      requireAuth: true,
      description: '',
      enabled: true,
      createdAt: service.createdAt,
      updatedAt: service.createdAt,
      access: null,
      forwardAuthorization: false,
      ...defaultPool('http://localhost:3000'),
    });
    assert.match(service.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Date.parse(service.createdAt) >= before && Date.parse(service.createdAt) <= Date.now());
    assert.deepEqual(t.registry.get(service.id), service);
  });

  it('keeps requireAuth false and a description', async () => {
    const service = await t.registry.create({ ...orders, requireAuth: false, description: 'All orders' }, actor);
    assert.equal(t.registry.get(service.id).requireAuth, false);
    assert.equal(t.registry.get(service.id).description, 'All orders');
  });

  it('records SERVICE_CREATED with the actor and the service as details', async () => {
    const service = await t.registry.create(orders, actor);
    const [entry, ...rest] = auditTrail();
    assert.equal(rest.length, 0);
    assert.equal(entry!.action, 'SERVICE_CREATED');
    assert.equal(entry!.user_id, 'admin-sub');
    assert.equal(entry!.ip_address, '203.0.113.7');
    assert.equal(entry!.service_id, service.id);
    assert.deepEqual(JSON.parse(entry!.details), { service });
  });

  it('publishes a snapshot that contains the new service', async () => {
    const service = await t.registry.create(orders, actor);
    assert.equal(t.snapshots.length, 1);
    assert.deepEqual(t.snapshots[0], [service]);
  });

  it('rejects a taken path with 409 Path already in use, storing, auditing and publishing nothing', async () => {
    const first = await t.registry.create(orders, actor);
    await rejectsWith(t.registry.create({ ...orders, name: 'Other' }, actor), 'PATH_IN_USE', 'Path already in use');
    assert.deepEqual(t.registry.list(), [first]);
    assert.equal(auditCount(), 1);
    assert.equal(t.snapshots.length, 1);
  });

  it('rejects a path that differs only in case with 409, since routing ignores case', async () => {
    const first = await t.registry.create(orders, actor);
    await rejectsWith(t.registry.create({ ...orders, path: '/ORDERS' }, actor), 'PATH_IN_USE', 'Path already in use');
    assert.deepEqual(t.registry.list(), [first]);
    assert.equal(auditCount(), 1);
  });

  it('stores nothing for an invalid body', async () => {
    await rejectsWith(t.registry.create({ ...orders, path: 'orders' }, actor), 'BAD_REQUEST');
    await rejectsWith(t.registry.create({ name: 'x' }, actor), 'MISSING_FIELDS');
    assert.equal(t.registry.counts().total, 0);
    assert.equal(auditCount(), 0);
    assert.equal(t.snapshots.length, 0);
  });

  it('rolls the row back when its audit entry cannot be written', async () => {
    breakAuditLog();
    await assert.rejects(t.registry.create(orders, actor), /audit down/);
    assert.deepEqual(t.registry.list(), []);
    assert.equal(t.snapshots.length, 0);
  });
});

describe('ServiceRegistry.get and list', () => {
  it('lists every service ordered by path, disabled ones included', async () => {
    const b = await t.registry.create({ ...orders, path: '/b' }, actor);
    const a = await t.registry.create({ ...orders, path: '/a' }, actor);
    const root = await t.registry.create({ ...orders, path: '/' }, actor);
    await t.registry.setEnabled(b.id, { enabled: false }, actor);
    assert.deepEqual(t.registry.list().map((s) => s.path), ['/', '/a', '/b']);
    assert.deepEqual(t.registry.list().map((s) => s.id), [root.id, a.id, b.id]);
  });

  it('snapshot: the same frozen objects until a write, committed or not, then the registry as it is', async () => {
    const service = await t.registry.create(orders, actor);
    const first = t.registry.snapshot();
    assert.deepEqual(first, t.registry.list());
    assert.equal(t.registry.snapshot(), first, 'read once per change, not per call');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first[0]));
    await t.registry.update(service.id, { access: { groups: ['ops'] } }, actor);
    const updated = t.registry.snapshot();
    assert.notEqual(updated[0], first[0], 'a changed service is a new object');
    assert.deepEqual(updated[0]!.access, { groups: ['ops'], emails: [], emailDomains: [], subjects: [] });
    await rejectsWith(t.registry.create(orders, actor), 'PATH_IN_USE');
    assert.notEqual(t.registry.snapshot(), updated, 'a failed write reads the table again too');
    assert.deepEqual(t.registry.snapshot(), updated);
  });

  it('throws 404 Service not found for an unknown UUID and for ids that are not UUIDs', async () => {
    await t.registry.create(orders, actor);
    for (const id of [crypto.randomUUID(), 'abc', '', "' OR '1'='1", '../orders']) {
      assert.throws(() => t.registry.get(id), (error) => {
        assert.ok(error instanceof GatewayError);
        assert.equal(error.status, 404);
        assert.equal(error.message, 'Service not found');
        return true;
      });
    }
  });
});

describe('ServiceRegistry.update', () => {
  it('changes the given fields, bumps updatedAt, keeps id and createdAt', async () => {
    const created = await t.registry.create(orders, actor);
    await sleep(5);
    const updated = await t.registry.update(created.id, { name: 'Orders v2', requireAuth: false, id: 'ignored' }, actor);
    assert.deepEqual(updated, { ...created, name: 'Orders v2', requireAuth: false, updatedAt: updated.updatedAt });
    assert.ok(updated.updatedAt > created.updatedAt);
    assert.deepEqual(t.registry.get(created.id), updated);
  });

  it('records SERVICE_UPDATED with before and after of the changed fields only', async () => {
    const created = await t.registry.create({ ...orders, description: 'same' }, actor);
    await t.registry.update(created.id, { name: 'Renamed', description: 'same', targetUrl: 'https://orders.internal/v2' }, actor);
    const entry = auditTrail()[1]!;
    assert.equal(entry.action, 'SERVICE_UPDATED');
    assert.equal(entry.service_id, created.id);
    assert.equal(entry.user_id, 'admin-sub');
    assert.deepEqual(JSON.parse(entry.details), {
      name: 'Renamed',
      path: orders.path,
      changes: {
        name: { before: 'Orders', after: 'Renamed' },
        targetUrl: { before: 'http://localhost:3000', after: 'https://orders.internal/v2' },
        targets: { before: [{ url: 'http://localhost:3000', weight: 1 }], after: [{ url: 'https://orders.internal/v2', weight: 1 }] },
      },
    });
  });

  it('publishes the updated service', async () => {
    const created = await t.registry.create(orders, actor);
    const updated = await t.registry.update(created.id, { path: '/orders-v2' }, actor);
    assert.equal(t.snapshots.length, 2);
    assert.deepEqual(t.snapshots[1], [updated]);
  });

  it('can disable through PUT, audited as a change of enabled', async () => {
    const created = await t.registry.create(orders, actor);
    const updated = await t.registry.update(created.id, { enabled: false }, actor);
    assert.equal(updated.enabled, false);
    assert.deepEqual(JSON.parse(auditTrail()[1]!.details), { name: 'Orders', path: '/orders', changes: { enabled: { before: true, after: false } } });
  });

  it('is a no-op for an empty body or unchanged values: same service, no audit entry, no publish', async () => {
    const created = await t.registry.create(orders, actor);
    await sleep(5);
    assert.deepEqual(await t.registry.update(created.id, {}, actor), created);
    assert.deepEqual(await t.registry.update(created.id, { ...orders, requireAuth: true, enabled: true, createdAt: 'x' }, actor), created);
    assert.deepEqual(t.registry.get(created.id), created);
    assert.equal(auditCount(), 1);
    assert.equal(t.snapshots.length, 1);
  });

  it('rejects moving to a taken path with 409, leaving row and audit log unchanged', async () => {
    const a = await t.registry.create(orders, actor);
    await t.registry.create({ ...orders, path: '/billing' }, actor);
    await rejectsWith(t.registry.update(a.id, { path: '/billing', name: 'Clash' }, actor), 'PATH_IN_USE');
    assert.deepEqual(t.registry.get(a.id), a);
    assert.equal(auditCount(), 2);
    assert.equal(t.snapshots.length, 2);
  });

  it('rejects moving to a taken path in another case, but lets a service change the case of its own', async () => {
    const a = await t.registry.create(orders, actor);
    await t.registry.create({ ...orders, path: '/billing' }, actor);
    await rejectsWith(t.registry.update(a.id, { path: '/Billing' }, actor), 'PATH_IN_USE');
    assert.equal((await t.registry.update(a.id, { path: '/Orders' }, actor)).path, '/Orders');
  });

  it('throws 404 for an unknown id, and 400 for an invalid body, changing nothing', async () => {
    const created = await t.registry.create(orders, actor);
    await rejectsWith(t.registry.update(crypto.randomUUID(), { name: 'x' }, actor), 'SERVICE_NOT_FOUND');
    await rejectsWith(t.registry.update(created.id, { path: '/api' }, actor), 'BAD_REQUEST');
    await rejectsWith(t.registry.update(created.id, { colour: 'red' }, actor), 'BAD_REQUEST');
    assert.deepEqual(t.registry.get(created.id), created);
    assert.equal(auditCount(), 1);
  });

  it('rolls the change back when its audit entry cannot be written', async () => {
    const created = await t.registry.create(orders, actor);
    breakAuditLog();
    await assert.rejects(t.registry.update(created.id, { name: 'Lost' }, actor), /audit down/);
    assert.deepEqual(t.registry.get(created.id), created);
  });
});

describe('ServiceRegistry: access policies and bearer forwarding (design.md §4.7)', () => {
  const policy = { groups: ['ops'], emails: ['ann@example.com'], emailDomains: ['example.org'], subjects: ['s-1'] };

  it('stores the policy normalised and forwardAuthorization, and publishes them', async () => {
    const created = await t.registry.create(
      { ...orders, access: { groups: ['ops', ' ops'], emails: ['Ann@Example.com'], emailDomains: ['EXAMPLE.org'], subjects: ['s-1'] }, forwardAuthorization: true },
      actor,
    );
    assert.deepEqual(created.access, policy);
    assert.equal(created.forwardAuthorization, true);
    assert.deepEqual(t.registry.get(created.id), created);
    assert.deepEqual(t.snapshots[0], [created]);
    const row = t.db.prepare('SELECT access, forward_authorization FROM services WHERE id = ?').get(created.id);
    assert.deepEqual(row, { access: JSON.stringify(policy), forward_authorization: 1 });
  });

  it('stores no policy as NULL, and an all-empty policy as none', async () => {
    const created = await t.registry.create({ ...orders, access: { groups: [], subjects: [] } }, actor);
    assert.equal(created.access, null);
    assert.deepEqual(t.db.prepare('SELECT access FROM services WHERE id = ?').get(created.id), { access: null });
  });

  it('audits a policy: in SERVICE_CREATED and SERVICE_DELETED details, and as before/after in SERVICE_UPDATED', async () => {
    const created = await t.registry.create({ ...orders, access: policy }, actor);
    assert.deepEqual(JSON.parse(auditTrail()[0]!.details).service.access, policy);
    await t.registry.update(created.id, { access: { groups: ['ops', 'dev'] }, forwardAuthorization: true }, actor);
    const after = { groups: ['ops', 'dev'], emails: [], emailDomains: [], subjects: [] };
    assert.deepEqual(JSON.parse(auditTrail()[1]!.details), {
      name: 'Orders',
      path: '/orders',
      changes: { access: { before: policy, after }, forwardAuthorization: { before: false, after: true } },
    });
    await t.registry.update(created.id, { access: null }, actor);
    assert.deepEqual(JSON.parse(auditTrail()[2]!.details).changes, { access: { before: after, after: null } });
    await t.registry.remove(created.id, actor);
    assert.equal(JSON.parse(auditTrail()[3]!.details).service.access, null);
  });

  it('a policy given again as stored, in another case or order of keys, changes nothing', async () => {
    const created = await t.registry.create({ ...orders, access: policy }, actor);
    const same = { subjects: ['s-1'], emailDomains: ['Example.ORG'], emails: ['ANN@example.com'], groups: ['ops'] };
    assert.deepEqual(await t.registry.update(created.id, { access: same, forwardAuthorization: false }, actor), created);
    assert.equal(auditCount(), 1);
    assert.equal(t.snapshots.length, 1);
  });

  it('refuses a PUT that turns requireAuth off while a policy stays, and allows it with the policy removed', async () => {
    const created = await t.registry.create({ ...orders, access: policy }, actor);
    await assert.rejects(t.registry.update(created.id, { requireAuth: false }, actor), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.deepEqual(error.fields, { access: 'needs requireAuth' });
      return true;
    });
    assert.deepEqual(t.registry.get(created.id), created);
    assert.equal(auditCount(), 1);
    const open = await t.registry.update(created.id, { requireAuth: false, access: null }, actor);
    assert.equal(open.requireAuth, false);
    assert.equal(open.access, null);
    await rejectsWith(t.registry.update(created.id, { access: policy }, actor), 'BAD_REQUEST', 'Invalid service: access needs requireAuth');
  });

  it('migrates a database made before policies: its services get no policy and no forwarding', async () => {
    const old = join(t.dir, 'old.db');
    databaseAtVersion(old, 2, 'http://localhost:1');
    const migrated = openDatabase(old);
    try {
      const [service] = new ServiceRegistry(migrated, new AuditLog(migrated), new MemoryEventBus()).list();
      assert.equal(service!.access, null);
      assert.equal(service!.forwardAuthorization, false);
    } finally {
      migrated.close();
    }
  });
});

describe('ServiceRegistry.remove', () => {
  it('deletes the service, records SERVICE_DELETED with it, and publishes', async () => {
    const created = await t.registry.create(orders, actor);
    await t.registry.remove(created.id, actor);
    assert.throws(() => t.registry.get(created.id), GatewayError);
    assert.deepEqual(t.registry.list(), []);
    const entry = auditTrail()[1]!;
    assert.equal(entry.action, 'SERVICE_DELETED');
    assert.equal(entry.service_id, created.id);
    assert.deepEqual(JSON.parse(entry.details), { service: created });
    assert.deepEqual(t.snapshots.at(-1), []);
  });

  it('frees the path for a new service', async () => {
    const created = await t.registry.create(orders, actor);
    await t.registry.remove(created.id, actor);
    assert.equal((await t.registry.create(orders, actor)).path, '/orders');
  });

  it('throws 404 for an unknown id without an audit entry', async () => {
    await rejectsWith(t.registry.remove(crypto.randomUUID(), actor), 'SERVICE_NOT_FOUND');
    await rejectsWith(t.registry.remove('not-a-uuid', actor), 'SERVICE_NOT_FOUND');
    assert.equal(auditCount(), 0);
  });

  it('keeps the service when its audit entry cannot be written', async () => {
    const created = await t.registry.create(orders, actor);
    breakAuditLog();
    await assert.rejects(t.registry.remove(created.id, actor), /audit down/);
    assert.deepEqual(t.registry.get(created.id), created);
  });
});

describe('ServiceRegistry: changes while another connection writes (the access-log writer thread)', () => {
  /**
   * A second connection, in a worker thread as the admin's access-log writer is, that takes the
   * write lock, writes and holds it for `holdMs` before committing. Resolves once it holds the lock.
   */
  async function otherWriterHolding(holdMs: number): Promise<{ committed: Promise<void> }> {
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const db = new (require(workerData.module))(workerData.path);
       db.pragma('busy_timeout = 5000');
       db.exec('BEGIN IMMEDIATE');
       db.exec('CREATE TABLE other_writer (n INTEGER)');
       parentPort.postMessage('locked');
       setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('committed'); }, workerData.holdMs);`,
      { eval: true, workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path: t.db.name, holdMs } },
    );
    const next = () => new Promise<unknown>((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    await next();
    return { committed: next().then(() => worker.terminate()).then(() => undefined) };
  }

  it('waits for the other writer and then applies a change that reads first (If-Match), instead of failing with SQLITE_BUSY', async () => {
    const created = await t.registry.create(orders, actor);
    const other = await otherWriterHolding(200);
    await t.registry.remove(created.id, actor, '*');
    await other.committed;
    assert.deepEqual(t.registry.list(), []);
    assert.equal(auditTrail().at(-1)!.action, 'SERVICE_DELETED');
    assert.equal((t.db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'other_writer'").get() as { n: number }).n, 1);
  });
});

describe('ServiceRegistry.setEnabled', () => {
  it('disables and enables, recording SERVICE_DISABLED and SERVICE_ENABLED', async () => {
    const created = await t.registry.create(orders, actor);
    await sleep(5);
    const disabled = await t.registry.setEnabled(created.id, { enabled: false }, actor);
    assert.equal(disabled.enabled, false);
    assert.ok(disabled.updatedAt > created.updatedAt);
    assert.deepEqual(t.registry.get(created.id), disabled);
    const enabled = await t.registry.setEnabled(created.id, { enabled: true }, actor);
    assert.equal(enabled.enabled, true);
    const trail = auditTrail();
    assert.deepEqual(trail.map((e) => e.action), ['SERVICE_CREATED', 'SERVICE_DISABLED', 'SERVICE_ENABLED']);
    assert.ok(trail.every((e) => e.service_id === created.id && e.user_id === 'admin-sub'));
    assert.deepEqual(JSON.parse(trail[1]!.details), { name: 'Orders', path: '/orders' });
  });

  it('publishes the new state', async () => {
    const created = await t.registry.create(orders, actor);
    await t.registry.setEnabled(created.id, { enabled: false }, actor);
    assert.equal(t.snapshots.length, 2);
    assert.equal(t.snapshots[1]![0]!.enabled, false);
  });

  it('is a no-op when the state is already as asked: no audit entry, updatedAt kept, no publish', async () => {
    const created = await t.registry.create(orders, actor);
    await sleep(5);
    assert.deepEqual(await t.registry.setEnabled(created.id, { enabled: true }, actor), created);
    assert.equal(auditCount(), 1);
    assert.equal(t.snapshots.length, 1);
  });

  it('rejects a bad body with 400 and an unknown id with 404, changing nothing', async () => {
    const created = await t.registry.create(orders, actor);
    await rejectsWith(t.registry.setEnabled(created.id, { enabled: 'false' }, actor), 'BAD_REQUEST');
    await rejectsWith(t.registry.setEnabled(created.id, {}, actor), 'BAD_REQUEST');
    await rejectsWith(t.registry.setEnabled(crypto.randomUUID(), { enabled: false }, actor), 'SERVICE_NOT_FOUND');
    assert.deepEqual(t.registry.get(created.id), created);
    assert.equal(auditCount(), 1);
  });

  it('rolls back when its audit entry cannot be written', async () => {
    const created = await t.registry.create(orders, actor);
    breakAuditLog();
    await assert.rejects(t.registry.setEnabled(created.id, { enabled: false }, actor), /audit down/);
    assert.equal(t.registry.get(created.id).enabled, true);
  });
});

describe('ServiceRegistry.counts', () => {
  it('counts all, enabled and disabled services', async () => {
    assert.deepEqual(t.registry.counts(), { total: 0, enabled: 0, disabled: 0 });
    const a = await t.registry.create(orders, actor);
    await t.registry.create({ ...orders, path: '/b' }, actor);
    await t.registry.create({ ...orders, path: '/c' }, actor);
    await t.registry.setEnabled(a.id, { enabled: false }, actor);
    assert.deepEqual(t.registry.counts(), { total: 3, enabled: 2, disabled: 1 });
  });
});

describe('ServiceRegistry.publish', () => {
  it('publishes the current registry on demand', async () => {
    const created = await t.registry.create(orders, actor);
    await t.registry.publish();
    assert.deepEqual(t.snapshots.at(-1), [created]);
  });

  it('delivers snapshots in order, the last one carrying the latest state, even on a slow bus', async () => {
    const delivered: string[][] = [];
    let calls = 0;
    const slowBus: Pick<EventBus, 'publishRegistry'> = {
      async publishRegistry(services) {
        const delay = calls++ === 0 ? 30 : 0;
        await sleep(delay);
        delivered.push(services.map((s) => s.path));
      },
    };
    const slow = new ServiceRegistry(t.db, t.audit, slowBus);
    await Promise.all([slow.create(orders, actor), slow.create({ ...orders, path: '/b' }, actor)]);
    assert.deepEqual(delivered.at(-1), ['/b', '/orders']);
  });
});
