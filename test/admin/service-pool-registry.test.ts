/**
 * The pool's service fields (design.md §4.13) in the registry (admin/registry/service-registry.ts) on a SQLite file: stored and
 * read back, `target_url` kept the first target's, a database from before pools migrated (its rows
 * one target each), the audit diff, one transaction per write, and the registry document (export,
 * plan, apply, the CLI's plan table, a document from before pools).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AuditLog, type Actor, type AuditRecord } from '../../admin/audit-log.js';
import { planTable } from '../../admin/cli/plan-table.js';
import { openDatabase } from '../../admin/database.js';
import { MIGRATIONS } from '../../admin/migrations.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { GatewayError } from '../../shared/errors.js';
import { DEFAULT_HEALTH_CHECK, defaultPool } from './pool-fields.js';
import { databaseAtVersion, tempRegistry, type TempRegistry } from '../support/temp-registry.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };
const pool = [
  { url: 'http://orders-1:8080', weight: 3 },
  { url: 'http://orders-2:8080', weight: 1 },
  { url: 'http://orders-3:8080/base', weight: 1 },
];
const orders = {
  name: 'Orders',
  path: '/orders',
  targets: pool,
  loadBalancing: 'least_requests',
  healthCheck: { path: '/healthz', intervalSeconds: 5, timeoutMs: 1000 },
  outlierDetection: { maxFails: 5 },
  retries: 2,
};
/** `orders` as the registry answers it (besides id, timestamps and the other fields). */
const ordersPool = {
  targetUrl: 'http://orders-1:8080',
  targets: pool,
  loadBalancing: 'least_requests',
  healthCheck: { ...DEFAULT_HEALTH_CHECK, path: '/healthz', intervalSeconds: 5, timeoutMs: 1000 },
  outlierDetection: { maxFails: 5, windowSeconds: 10, ejectSeconds: 30 },
  retries: 2,
};

let t: TempRegistry;
beforeEach(() => {
  t = tempRegistry('gatehouse-pool-');
});
afterEach(() => t.close());

/** The newest audit record. */
const lastAudit = (): AuditRecord => t.audit.list(1, 0).logs[0]!;
/** The pool's columns of service `id`'s row. */
const columns = (id: string) =>
  t.db.prepare('SELECT target_url, targets, load_balancing, health_check, outlier_detection, retries FROM services WHERE id = ?').get(id);

describe('stored and read back', () => {
  it('a service created with a pool answers it, keeps it in its row (target_url the first url), and publishes it', async () => {
    const created = await t.registry.create(orders, actor);
    assert.deepEqual({ ...created, ...ordersPool }, created, 'the answer carries the pool');
    assert.deepEqual(columns(created.id), {
      target_url: 'http://orders-1:8080',
      targets: JSON.stringify(pool),
      load_balancing: 'least_requests',
      health_check: JSON.stringify(ordersPool.healthCheck),
      outlier_detection: JSON.stringify(ordersPool.outlierDetection),
      retries: 2,
    });
    const reopened = new ServiceRegistry(t.db, t.audit, new MemoryEventBus());
    assert.deepEqual(reopened.get(created.id), created);
    assert.deepEqual(t.snapshots.at(-1), [created]);
    assert.deepEqual(JSON.parse(lastAudit().details), { service: created });
  });

  it('a service created with targetUrl only has every default, stored as such (no active checks: NULL)', async () => {
    const created = await t.registry.create({ name: 'Shop', path: '/shop', targetUrl: 'http://shop' }, actor);
    assert.deepEqual({ ...created, ...defaultPool('http://shop') }, created);
    assert.deepEqual(columns(created.id), {
      target_url: 'http://shop',
      targets: '[{"url":"http://shop","weight":1}]',
      load_balancing: 'round_robin',
      health_check: null,
      outlier_detection: '{"maxFails":3,"windowSeconds":10,"ejectSeconds":30}',
      retries: 1,
    });
  });

  it('a toggle answers and publishes the pool as it is', async () => {
    const created = await t.registry.create(orders, actor);
    const disabled = await t.registry.setEnabled(created.id, { enabled: false }, actor);
    assert.deepEqual(disabled, { ...created, enabled: false, updatedAt: disabled.updatedAt });
    assert.deepEqual(t.snapshots.at(-1), [disabled]);
  });
});

describe('a database from before pools', () => {
  it('is migrated: each existing row is the one target target_url (weight 1) with the defaults, and keeps being so once changed', async () => {
    const old = join(t.dir, 'old.db');
    const id = databaseAtVersion(old, MIGRATIONS.length - 1, 'http://old:81/app');

    const migrated = openDatabase(old);
    try {
      assert.equal(migrated.pragma('user_version', { simple: true }), MIGRATIONS.length);
      const oldRegistry = new ServiceRegistry(migrated, new AuditLog(migrated), new MemoryEventBus());
      const [service] = oldRegistry.list();
      assert.deepEqual(service, {
        id,
        name: 'Old',
        path: '/old',
        targetUrl: 'http://old:81/app',
        requireAuth: true,
        description: '',
        enabled: true,
        createdAt: '2025-01-01T00:00:00.000Z',
        updatedAt: '2025-01-01T00:00:00.000Z',
        access: null,
        forwardAuthorization: false,
        ...defaultPool('http://old:81/app'),
      });
      assert.deepEqual(oldRegistry.exportDocument().services[0]!.targets, [{ url: 'http://old:81/app', weight: 1 }]);
      const renamed = await oldRegistry.update(id, { name: 'Renamed' }, actor);
      assert.deepEqual(renamed, { ...service, name: 'Renamed', updatedAt: renamed.updatedAt });
      assert.deepEqual(migrated.prepare('SELECT targets FROM services').get(), { targets: '[{"url":"http://old:81/app","weight":1}]' });
    } finally {
      migrated.close();
    }
  });
});

describe('changes and their audit diff', () => {
  it('a PUT of targetUrl alone replaces the pool with that one target: targetUrl and targets both in the diff', async () => {
    const created = await t.registry.create(orders, actor);
    const updated = await t.registry.update(created.id, { targetUrl: 'http://orders-9:8080' }, actor);
    assert.deepEqual(updated.targets, [{ url: 'http://orders-9:8080', weight: 1 }]);
    assert.deepEqual(JSON.parse(lastAudit().details), {
      name: 'Orders',
      path: '/orders',
      changes: {
        targetUrl: { before: 'http://orders-1:8080', after: 'http://orders-9:8080' },
        targets: { before: pool, after: [{ url: 'http://orders-9:8080', weight: 1 }] },
      },
    });
    assert.equal((columns(created.id) as { target_url: string }).target_url, 'http://orders-9:8080');
  });

  it('the first target\'s url given again as targetUrl still makes the pool that one target', async () => {
    const created = await t.registry.create(orders, actor);
    await t.registry.update(created.id, { targetUrl: 'http://orders-1:8080' }, actor);
    assert.deepEqual(JSON.parse(lastAudit().details).changes, { targets: { before: pool, after: [{ url: 'http://orders-1:8080', weight: 1 }] } });
  });

  it('a PUT of targets alone moves targetUrl to their first url; new weights alone change only targets', async () => {
    const created = await t.registry.create(orders, actor);
    const reordered = [pool[1]!, pool[0]!];
    const updated = await t.registry.update(created.id, { targets: reordered }, actor);
    assert.equal(updated.targetUrl, 'http://orders-2:8080');
    assert.equal((columns(created.id) as { target_url: string }).target_url, 'http://orders-2:8080');
    assert.deepEqual(JSON.parse(lastAudit().details).changes, {
      targetUrl: { before: 'http://orders-1:8080', after: 'http://orders-2:8080' },
      targets: { before: pool, after: reordered },
    });
    const reweighted = reordered.map((target) => ({ ...target, weight: 7 }));
    await t.registry.update(created.id, { targets: reweighted }, actor);
    assert.deepEqual(JSON.parse(lastAudit().details).changes, { targets: { before: reordered, after: reweighted } });
  });

  it('the other pool fields, each with before and after; the same values again are no change (no audit entry, updatedAt kept)', async () => {
    const created = await t.registry.create(orders, actor);
    const updated = await t.registry.update(created.id, { loadBalancing: 'cookie', healthCheck: null, outlierDetection: { ejectSeconds: 120 }, retries: 0 }, actor);
    assert.deepEqual(JSON.parse(lastAudit().details).changes, {
      loadBalancing: { before: 'least_requests', after: 'cookie' },
      healthCheck: { before: ordersPool.healthCheck, after: null },
      outlierDetection: { before: ordersPool.outlierDetection, after: { maxFails: 3, windowSeconds: 10, ejectSeconds: 120 } },
      retries: { before: 2, after: 0 },
    });
    const entries = t.audit.list(1, 0).total;
    const same = await t.registry.update(created.id, { targets: pool, loadBalancing: 'cookie', outlierDetection: { maxFails: 3, ejectSeconds: 120 }, retries: 0 }, actor);
    assert.deepEqual(same, updated);
    assert.equal(t.audit.list(1, 0).total, entries);
  });

  it('a refused change writes nothing: targetUrl disagreeing with targets, an audit entry that cannot be written', async () => {
    const created = await t.registry.create(orders, actor);
    const before = JSON.stringify(t.db.prepare('SELECT * FROM services').all());
    await assert.rejects(t.registry.update(created.id, { targetUrl: 'http://orders-2:8080', targets: pool }, actor), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.deepEqual(error.fields, { targetUrl: 'must be the first target\'s url ("http://orders-1:8080")' });
      return true;
    });
    t.db.exec("CREATE TRIGGER audit_down BEFORE INSERT ON audit_logs BEGIN SELECT RAISE(ABORT, 'audit down'); END");
    await assert.rejects(t.registry.update(created.id, { targets: [pool[2]!], retries: 5 }, actor), /audit down/);
    assert.equal(JSON.stringify(t.db.prepare('SELECT * FROM services').all()), before);
    assert.deepEqual(t.registry.get(created.id), created);
  });
});

describe('the registry document', () => {
  it('exports the pool of each service; applied again it changes nothing', async () => {
    const created = await t.registry.create(orders, actor);
    const { services } = t.registry.exportDocument();
    const { createdAt: _c, updatedAt: _u, ...entry } = created;
    assert.deepEqual(services, [entry]);
    assert.deepEqual(await t.registry.apply({ version: 1, services }, actor, { dryRun: false }), { create: [], update: [], delete: [], unchanged: ['/orders'] });
  });

  it('a document from before pools (targetUrl only) still applies: a new service is one target, a pooled one becomes one target', async () => {
    const pooled = await t.registry.create(orders, actor);
    const document = {
      version: 1,
      services: [
        { name: 'Orders', path: '/orders', targetUrl: 'http://orders-1:8080' },
        { name: 'Wiki', path: '/wiki', targetUrl: 'http://wiki:3000', requireAuth: false },
      ],
    };
    const planned = await t.registry.apply(document, actor, { dryRun: true });
    const wiki = { name: 'Wiki', path: '/wiki', targetUrl: 'http://wiki:3000', requireAuth: false, description: '', enabled: true, access: null, forwardAuthorization: false, ...defaultPool('http://wiki:3000') };
    const changes = {
      targets: { before: pool, after: [{ url: 'http://orders-1:8080', weight: 1 }] },
      loadBalancing: { before: 'least_requests', after: 'round_robin' },
      healthCheck: { before: ordersPool.healthCheck, after: null },
      outlierDetection: { before: ordersPool.outlierDetection, after: { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 } },
      retries: { before: 2, after: 1 },
    };
    assert.deepEqual(planned, {
      create: [{ path: '/wiki', service: wiki }],
      update: [{ path: '/orders', id: pooled.id, name: 'Orders', changes }],
      delete: [],
      unchanged: [],
    });
    assert.deepEqual(t.registry.get(pooled.id), pooled, 'a dry run changes nothing');

    await t.registry.apply(document, actor, { dryRun: false });
    assert.deepEqual(t.registry.list().map((s) => [s.path, s.targets]), [
      ['/orders', [{ url: 'http://orders-1:8080', weight: 1 }]],
      ['/wiki', [{ url: 'http://wiki:3000', weight: 1 }]],
    ]);
    const updated = t.audit.list(2, 0).logs.find((e) => e.action === 'SERVICE_UPDATED')!;
    assert.deepEqual(JSON.parse(updated.details).changes, changes);
  });

  it('the CLI\'s plan table shows each pool field that changes, values as JSON', async () => {
    await t.registry.create({ name: 'Orders', path: '/orders', targetUrl: 'http://orders-1:8080' }, actor);
    const document = { version: 1, services: [{ name: 'Orders', path: '/orders', targets: pool.slice(0, 2), loadBalancing: 'cookie', healthCheck: { expectStatus: 204 } }] };
    const planned = await t.registry.apply(document, actor, { dryRun: true });
    assert.equal(
      planTable(planned, false),
      [
        'ACTION  PATH     NAME    CHANGES',
        'update  /orders  Orders  targets: [{"url":"http://orders-1:8080","weight":1}] → [{"url":"http://orders-1:8080","weight":3},{"url":"http://orders-2:8080","weight":1}]',
        '                         loadBalancing: "round_robin" → "cookie"',
        `                         healthCheck: null → ${JSON.stringify({ ...DEFAULT_HEALTH_CHECK, expectStatus: 204 })}`,
        '',
        '0 to create, 1 to update, 0 to delete, 0 unchanged.',
        '',
      ].join('\n'),
    );
  });

  it('a document\'s pool is checked entry by entry, named services[<index>].<field>', async () => {
    const document = {
      version: 1,
      services: [
        { name: 'A', path: '/a', targetUrl: 'http://a', targets: [{ url: 'http://b' }] },
        { name: 'B', path: '/b', targets: [{ url: 'http://b', weight: 0 }], healthCheck: { intervalSeconds: 0 }, retries: 6 },
      ],
    };
    await assert.rejects(t.registry.apply(document, actor, { dryRun: true }), (error: unknown) => {
      assert.ok(error instanceof GatewayError);
      assert.deepEqual(error.fields, {
        'services[0].targetUrl': 'must be the first target\'s url ("http://b")',
        'services[1].targets': 'weight must be an integer from 1 to 100 (got 0)',
        'services[1].healthCheck.intervalSeconds': 'must be an integer from 1 to 300',
        'services[1].retries': 'must be an integer from 0 to 5',
      });
      return true;
    });
  });
});
