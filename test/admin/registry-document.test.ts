/**
 * design.md §4.9, the declarative registry, on the registry itself (SQLite file, in-memory bus):
 * the exported document, plans (create, update with field diffs, delete, unchanged; matched by
 * path ignoring case), one transaction and one publication per apply, the audit trail, and
 * documents refused whole.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Actor } from '../../admin/audit-log.js';
import { GatewayError } from '../../shared/errors.js';
import type { Service } from '../../shared/types.js';
import { defaultPool, documentEntry } from './pool-fields.js';
import { tempRegistry, type TempRegistry } from '../support/temp-registry.js';

const actor: Actor = { userId: 'token:1234', ipAddress: '203.0.113.9' };
const policy = { groups: ['payroll'], emails: [], emailDomains: [], subjects: [] };

let t: TempRegistry;
beforeEach(() => {
  t = tempRegistry('gatehouse-document-');
});
afterEach(() => t.close());

/** Every row of the tables an apply may touch, to compare before and after. */
const dump = () => JSON.stringify([t.db.prepare('SELECT * FROM services ORDER BY id').all(), t.db.prepare('SELECT * FROM audit_logs ORDER BY id').all()]);
const apply = (document: unknown) => t.registry.apply(document, actor, { dryRun: false });
const plan = (document: unknown) => t.registry.apply(document, actor, { dryRun: true });

/** Three services: /orders (with a policy), /legacy (disabled), /shop. */
async function seed(): Promise<Record<'orders' | 'legacy' | 'shop', Service>> {
  const orders = await t.registry.create({ name: 'Orders', path: '/orders', targetUrl: 'http://orders:8080', access: policy }, actor);
  const legacyId = (await t.registry.create({ name: 'Legacy', path: '/legacy', targetUrl: 'http://legacy:80', requireAuth: false }, actor)).id;
  const legacy = await t.registry.setEnabled(legacyId, { enabled: false }, actor);
  const shop = await t.registry.create({ name: 'Shop', path: '/shop', targetUrl: 'https://shop.internal/base', description: 'The shop' }, actor);
  t.snapshots.length = 0;
  return { orders, legacy, shop };
}

/** Asserts `run` rejects with a 400 naming exactly `fields`. */
async function refused(run: Promise<unknown>, fields: Record<string, string>, message?: string): Promise<void> {
  await assert.rejects(run, (error) => {
    assert.ok(error instanceof GatewayError, String(error));
    assert.equal(error.status, 400);
    assert.deepEqual(error.fields, fields);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  });
}

describe('the exported document', () => {
  it('is { version: 1, services } with every service by path: id and every writable field, no timestamps', async () => {
    const { orders, legacy, shop } = await seed();
    assert.deepEqual(t.registry.exportDocument(), { version: 1, services: [legacy, orders, shop].map(documentEntry) });
    assert.equal(legacy.enabled, false);
    assert.deepEqual(orders.access, policy);
  });

  it('applied again changes nothing: all unchanged, no write, no audit entry, no publication', async () => {
    await seed();
    const before = dump();
    const result = await apply(t.registry.exportDocument());
    assert.deepEqual(result, { create: [], update: [], delete: [], unchanged: ['/legacy', '/orders', '/shop'] });
    assert.equal(dump(), before);
    assert.equal(t.snapshots.length, 0);
    assert.deepEqual(await apply({ version: 1, services: [] }).then(() => apply({ version: 1, services: [] })), { create: [], update: [], delete: [], unchanged: [] });
  });
});

describe('a plan and its application', () => {
  it('creates, updates with field diffs, deletes and keeps, in one transaction, audited per service, published once', async () => {
    const { orders, legacy, shop } = await seed();
    const document = {
      version: 1,
      services: [
        { name: 'Wiki', path: '/wiki', targetUrl: 'http://wiki:3000', requireAuth: false, description: 'new' },
        { ...t.registry.exportDocument().services[2]!, id: 'anything: ids are not matched' },
        { name: 'Orders API', path: '/orders', targetUrl: 'http://orders:9090', access: { groups: ['payroll', 'finance'] }, enabled: false },
      ],
    };
    const before = dump();
    const planned = await plan(document);
    const expectedPlan = {
      create: [{
        path: '/wiki',
        service: { name: 'Wiki', path: '/wiki', targetUrl: 'http://wiki:3000', requireAuth: false, description: 'new', enabled: true, access: null, forwardAuthorization: false, ...defaultPool('http://wiki:3000') },
      }],
      update: [{
        path: '/orders',
        id: orders.id,
        name: 'Orders API',
        changes: {
          name: { before: 'Orders', after: 'Orders API' },
          targetUrl: { before: 'http://orders:8080', after: 'http://orders:9090' },
          targets: { before: [{ url: 'http://orders:8080', weight: 1 }], after: [{ url: 'http://orders:9090', weight: 1 }] },
          enabled: { before: true, after: false },
          access: { before: policy, after: { groups: ['payroll', 'finance'], emails: [], emailDomains: [], subjects: [] } },
        },
      }],
      delete: [{ path: '/legacy', id: legacy.id, name: 'Legacy' }],
      unchanged: ['/shop'],
    };
    assert.deepEqual(planned, expectedPlan);
    assert.equal(dump(), before, 'a dry run writes nothing');
    assert.equal(t.snapshots.length, 0, 'a dry run publishes nothing');

    const applied = await apply(document);
    const wiki = t.registry.list().find((s) => s.path === '/wiki')!;
    assert.deepEqual(applied, { ...expectedPlan, create: [{ ...expectedPlan.create[0]!, id: wiki.id }] });
    assert.deepEqual(t.registry.list().map((s) => s.path), ['/orders', '/shop', '/wiki']);
    const updated = t.registry.get(orders.id);
    assert.equal(updated.name, 'Orders API');
    assert.equal(updated.enabled, false);
    assert.equal(updated.createdAt, orders.createdAt);
    assert.ok(updated.updatedAt >= orders.updatedAt);
    assert.equal(wiki.createdAt, updated.updatedAt, 'one time for the whole apply');
    assert.deepEqual(t.registry.get(shop.id), shop, 'unchanged, updatedAt included');
    assert.equal(t.registry.getTagged(orders.id).etag, '"2"', 'an update adds one to the version');
    assert.equal(t.registry.getTagged(shop.id).etag, '"1"');

    assert.equal(t.snapshots.length, 1, 'published once');
    assert.deepEqual(t.snapshots[0], t.registry.list());
    const entries = t.audit.list(3, 0).logs.reverse();
    assert.deepEqual(entries.map((e) => [e.action, e.service_id, e.user_id, e.ip_address]), [
      ['SERVICE_DELETED', legacy.id, 'token:1234', '203.0.113.9'],
      ['SERVICE_UPDATED', orders.id, 'token:1234', '203.0.113.9'],
      ['SERVICE_CREATED', wiki.id, 'token:1234', '203.0.113.9'],
    ]);
    assert.deepEqual(JSON.parse(entries[0]!.details), { service: legacy });
    assert.deepEqual(JSON.parse(entries[1]!.details), { name: 'Orders API', path: '/orders', changes: expectedPlan.update[0]!.changes });
    assert.deepEqual(JSON.parse(entries[2]!.details), { service: wiki });

    const again = await plan(document);
    assert.deepEqual(again, { create: [], update: [], delete: [], unchanged: ['/orders', '/shop', '/wiki'] }, 'idempotent');
  });

  it('matches paths ignoring case; a changed spelling is an update of the path', async () => {
    const { orders } = await seed();
    const document = t.registry.exportDocument();
    document.services[1]!.path = '/ORDERS';
    const planned = await apply(document);
    assert.deepEqual(planned.update, [{ path: '/ORDERS', id: orders.id, name: 'Orders', changes: { path: { before: '/orders', after: '/ORDERS' } } }]);
    assert.equal(t.registry.get(orders.id).path, '/ORDERS');
  });

  it('in a legacy registry with paths differing only in case: matches the exact spelling, else the first, and deletes the others', async () => {
    await seed();
    // A legacy database may hold such paths (service-registry.ts); the table's unique index is case-sensitive.
    const insert = t.db.prepare(`INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, forward_authorization)
      VALUES (?, ?, ?, 'http://twin:1', 1, '', 1, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 0)`);
    const twins = ['/Twin', '/twin', '/TWIN'].map((path) => {
      const id = crypto.randomUUID();
      insert.run(id, `Twin ${path}`, path);
      return { id, path };
    });
    const document = t.registry.exportDocument();
    const exact = (await plan({ version: 1, services: [...document.services.filter((s) => !/twin/i.test(s.path)), { name: 'Twin /twin', path: '/twin', targetUrl: 'http://twin:1' }] }));
    assert.deepEqual(exact.unchanged, ['/legacy', '/orders', '/shop', '/twin']);
    assert.deepEqual(exact.delete.map((d) => d.path), ['/TWIN', '/Twin']);
    const first = await apply({ version: 1, services: [...document.services.filter((s) => !/twin/i.test(s.path)), { name: 'Twin', path: '/tWin', targetUrl: 'http://twin:1' }] });
    assert.deepEqual(first.update.map((u) => [u.id, u.changes.path]), [[twins[2]!.id, { before: '/TWIN', after: '/tWin' }]], '/TWIN sorts first');
    assert.deepEqual(first.delete.map((d) => d.path), ['/Twin', '/twin']);
    assert.deepEqual(t.registry.list().map((s) => s.path), ['/legacy', '/orders', '/shop', '/tWin']);
  });

  it('takes an entry\'s omitted fields at their defaults: the document alone says what the registry becomes', async () => {
    const { legacy } = await seed();
    const planned = await plan({ version: 1, services: [{ name: 'Legacy', path: '/legacy', targetUrl: 'http://legacy:80' }] });
    assert.deepEqual(planned.update, [{ path: '/legacy', id: legacy.id, name: 'Legacy', changes: { requireAuth: { before: false, after: true }, enabled: { before: false, after: true } } }]);
    assert.deepEqual(planned.delete.map((d) => d.path), ['/orders', '/shop']);
  });

  it('validates entries as the create body, normalised: an entry equal to the stored service once normalised is unchanged', async () => {
    await seed();
    const document = t.registry.exportDocument();
    const orders = document.services[1]!;
    document.services[1] = { ...orders, name: ` ${orders.name} `, access: { groups: ['payroll', 'payroll'], emails: [], emailDomains: [], subjects: [] } };
    assert.deepEqual((await plan(document)).unchanged, ['/legacy', '/orders', '/shop']);
  });
});

describe('a document refused whole', () => {
  it('400 naming each entry and field, nothing planned, applied, audited or published', async () => {
    await seed();
    const before = dump();
    const document = {
      version: 1,
      services: [
        { name: 'Fine', path: '/fine', targetUrl: 'http://fine:1' },
        { name: 'No path', targetUrl: 'http://x:1' },
        { name: 'Bad path', path: 'relative', targetUrl: 'http://x:1', color: 'blue' },
        { name: 'Bad policy', path: '/policy', targetUrl: 'http://x:1', access: { emails: ['not-an-email'] } },
        { name: 'Open policy', path: '/open', targetUrl: 'http://x:1', requireAuth: false, access: { groups: ['g'] } },
        'not an object',
        { name: 'Twin', path: '/FINE', targetUrl: 'http://x:1', enabled: 'yes' },
        { name: 'Gateway', path: '/api/x', targetUrl: 'http://x:1' },
      ],
    };
    const fields = {
      'services[1].path': 'is required',
      'services[2].path': 'must start with /',
      'services[2].color': 'unknown field',
      'services[3].access.emails': 'must be an email address (got "not-an-email")',
      'services[4].access': 'needs requireAuth',
      'services[5]': 'must be an object',
      'services[6].enabled': 'must be a boolean',
      'services[7].path': 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)',
    };
    for (const dryRun of [true, false]) await refused(t.registry.apply(document, actor, { dryRun }), fields);
    assert.equal(dump(), before);
    assert.equal(t.snapshots.length, 0);
  });

  it('a path twice, in any case: the later entry is named', async () => {
    await refused(
      apply({ version: 1, services: [{ name: 'A', path: '/app', targetUrl: 'http://a:1' }, { name: 'B', path: '/b', targetUrl: 'http://b:1' }, { name: 'C', path: '/App', targetUrl: 'http://c:1' }] }),
      { 'services[2].path': "is services[0]'s path too (paths are unique ignoring case)" },
      "Invalid registry document: services[2].path is services[0]'s path too (paths are unique ignoring case)",
    );
  });

  it('the document itself: an object of version 1 and a list of services, nothing else', async () => {
    await refused(apply({}), { version: 'is required', services: 'is required' }, 'Invalid registry document: version is required; services is required');
    await refused(apply({ version: 2, services: {} }), { version: 'must be 1', services: 'must be a list of services' });
    await refused(apply({ version: '1', services: [], generatedBy: 'me' }), { version: 'must be 1', generatedBy: 'unknown field' }, 'Invalid registry document: version must be 1. Unknown fields: generatedBy');
    for (const body of [[], null, 'x', 1]) {
      await assert.rejects(apply(body), (error) => error instanceof GatewayError && error.status === 400 && error.message === 'Body must be a JSON object');
    }
    assert.deepEqual(t.registry.list(), []);
  });

  it('a write failing inside the transaction (here the audit log) rolls the whole apply back', async () => {
    const { orders } = await seed();
    const before = dump();
    t.db.exec("CREATE TRIGGER audit_down BEFORE INSERT ON audit_logs WHEN NEW.action = 'SERVICE_CREATED' BEGIN SELECT RAISE(ABORT, 'audit down'); END");
    const document = t.registry.exportDocument();
    document.services = [{ ...document.services[1]!, name: 'Renamed' }, { ...document.services[1]!, path: '/new', id: '' }];
    await assert.rejects(apply(document), /audit down/);
    assert.equal(dump(), before, 'the deletions and the update before the failing creation are rolled back');
    assert.equal(t.registry.get(orders.id).name, 'Orders');
    assert.equal(t.snapshots.length, 0);
  });
});
