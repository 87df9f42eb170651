/**
 * Services on host names, the registry's side (issue 31, design.md §5): `hosts` validated and kept
 * in its normal form, `(host, path)` pairs unique across the registry (409 naming the pair),
 * ADMIN_URL's host refused, registry documents carrying hosts, the audit diff, the registry
 * published with them, and the migration that made room for them keeping every existing row.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { AuditLog, type Actor } from '../../admin/audit-log.js';
import { openDatabase } from '../../admin/database.js';
import { MIGRATIONS } from '../../admin/migrations.js';
import { reservedHosts } from '../../admin/registry/reserved-hosts.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { parseServiceCreate, parseServiceUpdate } from '../../admin/registry/service-validation.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { GatewayError } from '../../shared/errors.js';
import { normalizeHost } from '../../shared/services/host-names.js';
import { tempRegistry, type TempRegistry } from '../support/temp-registry.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };
const base = { name: 'App', path: '/', targetUrl: 'http://app:3000' };

let t: TempRegistry;
beforeEach(() => {
  t = tempRegistry('gatehouse-hosts-');
});
afterEach(() => t.close());

/** The 400 a create body with `hosts` gets: its `fields`. */
function refusal(hosts: unknown): Record<string, string> | undefined {
  try {
    parseServiceCreate({ ...base, hosts });
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    return error.fields;
  }
  assert.fail(`hosts ${JSON.stringify(hosts)} was accepted`);
}

/** Asserts `promise` rejects with PATH_IN_USE and exactly `fields` (undefined: none). */
async function inUse(promise: Promise<unknown>, fields: Record<string, string> | undefined): Promise<void> {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 409);
    assert.deepEqual(error.toJSON(), fields ? { error: 'Path already in use', fields } : { error: 'Path already in use' });
    return true;
  });
}

/** The services table as text, to show that a refused write changed nothing. */
const dump = () => JSON.stringify(t.db.prepare('SELECT * FROM services ORDER BY id').all());

describe('hosts: validation', () => {
  it('keeps each name in its normal form: lower case, IDNA A-labels, no trailing dot', () => {
    const parsed = parseServiceCreate({ ...base, hosts: ['App.Example.COM.', 'bücher.example', '*.Apps.Example.com', 'ＡＢＣ.example'] });
    assert.deepEqual(parsed.hosts, ['app.example.com', 'xn--bcher-kva.example', '*.apps.example.com', 'abc.example']);
    assert.equal(normalizeHost('BÜCHER.example.'), 'xn--bcher-kva.example');
  });

  it('is optional: absent or empty, the service has no hosts field, as before hosts', () => {
    assert.equal('hosts' in parseServiceCreate(base), false);
    assert.equal('hosts' in parseServiceCreate({ ...base, hosts: [] }), false);
    assert.deepEqual(parseServiceUpdate({ hosts: [] }), { hosts: [] });
  });

  it('refuses each bad name with its reason, quoting it', () => {
    const cases: [unknown, string][] = [
      ['a.com', 'must be a list of host names'],
      [[''], 'must not be empty (got "")'],
      [[7], 'must contain only strings (got 7)'],
      [['a.com:8080'], 'must not carry a port (got "a.com:8080")'],
      [['127.0.0.1'], 'must not be an IP address (got "127.0.0.1")'],
      [['0x7f.1'], 'must not be an IP address (got "0x7f.1")'],
      [['[::1]'], 'must not be an IP address (got "[::1]")'],
      [['*'], 'must name at least two labels after *. (*.example.com, not * or *.com) (got "*")'],
      [['*.com'], 'must name at least two labels after *. (*.example.com, not * or *.com) (got "*.com")'],
      [['a.*.example.com'], 'may hold * only as its whole first label (*.example.com) (got "a.*.example.com")'],
      [['*app.example.com'], 'may hold * only as its whole first label (*.example.com) (got "*app.example.com")'],
      [['*.*.example.com'], 'may hold * only as its whole first label (*.example.com) (got "*.*.example.com")'],
      [['a..example.com'], 'must not contain an empty label (got "a..example.com")'],
      [['under_score.example.com'], 'labels may only contain a-z, 0-9 and -, not at their start or end (got "under_score.example.com")'],
      [['-app.example.com'], 'labels may only contain a-z, 0-9 and -, not at their start or end (got "-app.example.com")'],
      [['exa%41mple.com'], 'labels may only contain a-z, 0-9 and -, not at their start or end (got "exa%41mple.com")'],
      [['a b.example.com'], 'labels may only contain a-z, 0-9 and -, not at their start or end (got "a b.example.com")'],
      [['xn--zz.example'], 'is not a valid internationalized domain name (got "xn--zz.example")'],
      [[`${'a'.repeat(64)}.example.com`], `labels must be at most 63 characters (got "${'a'.repeat(64)}.example.com")`],
      [[`${'a.'.repeat(126)}com`], `must be at most 253 characters (got "${'a.'.repeat(126)}com")`],
      [['app.example.com', 'APP.example.com.'], 'must not name a host twice (got "app.example.com")'],
      [Array.from({ length: 33 }, (_, i) => `h${i}.example.com`), 'must have at most 32 host names'],
    ];
    for (const [hosts, reason] of cases) assert.deepEqual(refusal(hosts), { hosts: reason }, JSON.stringify(hosts));
    assert.equal(parseServiceCreate({ ...base, hosts: Array.from({ length: 32 }, (_, i) => `h${i}.example.com`) }).hosts!.length, 32);
  });

  it("reserves ADMIN_URL's host unless it is PUBLIC_URL's, never an address", () => {
    const url = (text: string) => new URL(text);
    assert.deepEqual(reservedHosts(url('https://example.com'), undefined), []);
    assert.deepEqual(reservedHosts(url('https://example.com'), url('https://Admin.Example.com:8443')), ['admin.example.com']);
    assert.deepEqual(reservedHosts(url('http://localhost:8080'), url('http://localhost:8081')), []);
    assert.deepEqual(reservedHosts(url('http://localhost:8080'), url('http://127.0.0.1:8081')), []);
  });

  it("refuses ADMIN_URL's host, and a wildcard over it, on create, update and apply, changing nothing", async () => {
    const registry = new ServiceRegistry(t.db, t.audit, t.bus, { reservedHosts: ['admin.example.com'] });
    for (const hosts of [['Admin.Example.com'], ['*.example.com']]) {
      await assert.rejects(registry.create({ ...base, hosts }, actor), (error: GatewayError) => {
        assert.equal(error.status, 400);
        assert.match(error.fields!.hosts!, /^must not name ADMIN_URL's host admin\.example\.com, which serves the console/);
        return true;
      });
    }
    const app = await registry.create({ ...base, hosts: ['*.apps.example.com', 'example.com'] }, actor);
    const before = dump();
    await assert.rejects(registry.update(app.id, { hosts: ['admin.example.com'] }, actor), /Invalid service: hosts must not name ADMIN_URL's host/);
    await assert.rejects(registry.apply({ version: 1, services: [{ ...base, hosts: ['*.example.com'] }] }, actor, { dryRun: false }), (error: GatewayError) => {
      assert.match(error.fields!['services[0].hosts']!, /^must not name ADMIN_URL's host/);
      return true;
    });
    assert.equal(dump(), before);
  });
});

describe('(host, path) pairs are unique across the registry', () => {
  it('a host-less service at / and a host service at / stand side by side; same host, other path too', async () => {
    await t.registry.create({ ...base, name: 'Root' }, actor);
    const app = await t.registry.create({ ...base, hosts: ['app.example.com'] }, actor);
    await t.registry.create({ ...base, name: 'API', path: '/api-v1', hosts: ['app.example.com'] }, actor);
    await t.registry.create({ ...base, name: 'Wild', hosts: ['*.example.com'] }, actor);
    await t.registry.create({ ...base, name: 'Other', hosts: ['other.example.com'] }, actor);
    assert.deepEqual(app.hosts, ['app.example.com']);
    assert.deepEqual(t.registry.list().map((s) => [s.name, s.hosts ?? []]), [
      ['Root', []],
      ['Wild', ['*.example.com']],
      ['App', ['app.example.com']],
      ['Other', ['other.example.com']],
      ['API', ['app.example.com']],
    ]);
  });

  it('two services at / on one host: 409 naming the pair, in any spelling of host or path; nothing written', async () => {
    await t.registry.create({ ...base, path: '/Docs', hosts: ['app.example.com', 'www.example.com'] }, actor);
    const before = dump();
    const audits = t.audit.list(1, 0).total;
    await inUse(t.registry.create({ ...base, path: '/docs', hosts: ['other.example.com', 'WWW.example.com.'] }, actor), {
      hosts: 'www.example.com already has a service at /docs',
      path: 'is already in use on www.example.com',
    });
    assert.equal(dump(), before);
    assert.equal(t.audit.list(1, 0).total, audits);
    assert.equal(t.snapshots.length, 1);
  });

  it('host-less paths stay unique ignoring case, with the interface\'s answer as it was', async () => {
    await t.registry.create({ ...base, path: '/shop' }, actor);
    await t.registry.create({ ...base, path: '/shop', hosts: ['shop.example.com'] }, actor);
    await inUse(t.registry.create({ ...base, path: '/SHOP' }, actor), undefined);
  });

  it('an update that takes a pair is refused; removing hosts checks the host-less paths; the audit shows hosts before and after', async () => {
    const first = await t.registry.create({ ...base, hosts: ['a.example.com'] }, actor);
    const second = await t.registry.create({ ...base, hosts: ['b.example.com'] }, actor);
    await t.registry.create({ ...base, name: 'Root' }, actor);
    const before = dump();
    await inUse(t.registry.update(second.id, { hosts: ['b.example.com', 'a.example.com'] }, actor), {
      hosts: 'a.example.com already has a service at /',
      path: 'is already in use on a.example.com',
    });
    await inUse(t.registry.update(second.id, { hosts: [] }, actor), undefined);
    assert.equal(dump(), before);
    const moved = await t.registry.update(first.id, { hosts: ['c.example.com', 'a.example.com'] }, actor);
    assert.deepEqual(moved.hosts, ['c.example.com', 'a.example.com']);
    const [entry] = t.audit.list(1, 0).logs;
    assert.equal(entry!.action, 'SERVICE_UPDATED');
    assert.deepEqual(JSON.parse(entry!.details).changes, { hosts: { before: ['a.example.com'], after: ['c.example.com', 'a.example.com'] } });
    const cleared = await t.registry.update(first.id, { path: '/moved', hosts: [] }, actor);
    assert.equal('hosts' in cleared, false);
    assert.equal('hosts' in t.registry.get(first.id), false);
    assert.deepEqual(JSON.parse(t.audit.list(1, 0).logs[0]!.details).changes.hosts, { before: ['c.example.com', 'a.example.com'], after: [] });
    const unchanged = await t.registry.update(first.id, { hosts: [] }, actor);
    assert.equal(unchanged.updatedAt, cleared.updatedAt);
  });

  it('publishes the hosts to the data plane, and only services that have some carry the field', async () => {
    await t.registry.create({ ...base, hosts: ['app.example.com'] }, actor);
    await t.registry.create({ ...base, name: 'Root' }, actor);
    const published = t.snapshots.at(-1)!;
    assert.deepEqual(published.map((s) => s.hosts), [undefined, ['app.example.com']]);
    assert.equal(Object.hasOwn(published[0]!, 'hosts'), false);
  });

  it('lists the services naming a host, as written there', async () => {
    const app = await t.registry.create({ ...base, hosts: ['app.example.com'] }, actor);
    const api = await t.registry.create({ ...base, path: '/v1', hosts: ['x.example.com', 'app.example.com'] }, actor);
    const wild = await t.registry.create({ ...base, hosts: ['*.example.com'] }, actor);
    assert.deepEqual(t.registry.listNaming('app.example.com').map((s) => s.id), [app.id, api.id]);
    assert.deepEqual(t.registry.listNaming('*.example.com').map((s) => s.id), [wild.id]);
    assert.deepEqual(t.registry.listNaming('y.example.com'), []);
  });
});

describe('registry documents with hosts', () => {
  it('exports hosts only for services that have them, and a document applied again changes nothing', async () => {
    await t.registry.create({ ...base, name: 'Root' }, actor);
    await t.registry.create({ ...base, hosts: ['app.example.com', '*.apps.example.com'] }, actor);
    const document = t.registry.exportDocument();
    assert.deepEqual(document.services.map((s) => s.hosts), [undefined, ['app.example.com', '*.apps.example.com']]);
    assert.equal(Object.hasOwn(document.services[0]!, 'hosts'), false);
    const parsed = JSON.parse(JSON.stringify(document));
    assert.deepEqual(await t.registry.apply(parsed, actor, { dryRun: false }), { create: [], update: [], delete: [], unchanged: ['/', '/'] });
  });

  it('matches entries by path and a host: a changed host list updates the same service; a whole new one makes another', async () => {
    const app = await t.registry.create({ ...base, hosts: ['app.example.com'] }, actor);
    const root = await t.registry.create({ ...base, name: 'Root' }, actor);
    const document = {
      version: 1,
      services: [
        { ...base, hosts: ['app.example.com', 'app2.example.com'] },
        { ...base, name: 'Root', hosts: ['root.example.com'] },
      ],
    };
    const plan = await t.registry.apply(document, actor, { dryRun: false });
    assert.deepEqual(plan.update, [{ path: '/', id: app.id, name: 'App', changes: { hosts: { before: ['app.example.com'], after: ['app.example.com', 'app2.example.com'] } } }]);
    assert.deepEqual(plan.delete, [{ path: '/', id: root.id, name: 'Root' }]);
    assert.deepEqual(plan.create.map((c) => c.service.hosts), [['root.example.com']]);
    // An entry reached elsewhere than the service (no host of it left) is another service.
    const moved = await t.registry.apply({ version: 1, services: [{ ...base }] }, actor, { dryRun: true });
    assert.deepEqual([moved.create.length, moved.update, moved.delete.map((d) => d.id).sort()], [1, [], [app.id, plan.create[0]!.id].sort()]);
  });

  it('refuses a document that puts two services at one place, naming each, and applies nothing', async () => {
    await t.registry.create({ ...base, hosts: ['app.example.com'] }, actor);
    const before = dump();
    const document = {
      version: 1,
      services: [
        { ...base, hosts: ['app.example.com'] },
        { ...base, name: 'Twin', hosts: ['b.example.com', 'App.Example.com'] },
        { ...base, name: 'Root' },
        { ...base, name: 'Root twin', path: '/' },
        { ...base, name: 'Elsewhere', path: '/other', hosts: ['app.example.com'] },
      ],
    };
    await assert.rejects(t.registry.apply(document, actor, { dryRun: false }), (error: GatewayError) => {
      assert.equal(error.status, 400);
      assert.deepEqual(error.fields, {
        'services[1].hosts': "names app.example.com at services[0]'s path too ((host, path) pairs are unique, paths ignoring case)",
        'services[3].path': "is services[2]'s path too (paths are unique ignoring case)",
      });
      return true;
    });
    assert.equal(dump(), before);
  });
});

describe('the migration to hosts', () => {
  it('keeps every row, its id, path and settings, and lets a host service share a path with a host-less one', async () => {
    const path = join(t.dir, 'previous.db');
    const previous = new BetterSqlite3(path);
    for (const migration of MIGRATIONS.slice(0, -1)) previous.exec(migration);
    previous.pragma(`user_version = ${MIGRATIONS.length - 1}`);
    const insert = previous.prepare(
      `INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, access, forward_authorization, version, targets, retries)
       VALUES (?, ?, ?, 'http://old:1', 1, 'kept', ?, '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z', ?, 1, 4, ?, 3)`,
    );
    insert.run('11111111-1111-4111-8111-111111111111', 'Root', '/', 1, null, null);
    insert.run('22222222-2222-4222-8222-222222222222', 'Shop', '/shop', 0, '{"groups":["ops"],"emails":[],"emailDomains":[],"subjects":[]}', '[{"url":"http://old:1","weight":2}]');
    const rowsBefore = previous.prepare('SELECT * FROM services ORDER BY id').all();
    previous.close();

    const migrated = openDatabase(path);
    try {
      const rows = migrated.prepare('SELECT * FROM services ORDER BY id').all() as Record<string, unknown>[];
      assert.deepEqual(rows, (rowsBefore as Record<string, unknown>[]).map((row) => ({ ...row, hosts: '[]', rules: '[]', cors_preflight: 'auth', max_age: null, acr: null })));
      const indexes = migrated.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'services' AND sql IS NOT NULL ORDER BY name").all();
      assert.deepEqual(indexes, [{ name: 'services_by_lower_path' }, { name: 'services_by_path' }]);
      const registry = new ServiceRegistry(migrated, new AuditLog(migrated), new MemoryEventBus());
      assert.deepEqual(registry.list().map((s) => [s.id, s.path, s.hosts]), [
        ['11111111-1111-4111-8111-111111111111', '/', undefined],
        ['22222222-2222-4222-8222-222222222222', '/shop', undefined],
      ]);
      assert.equal(registry.getTagged('22222222-2222-4222-8222-222222222222').etag, '"4"');
      await registry.create({ ...base, hosts: ['app.example.com'] }, actor);
      await inUse(registry.create({ ...base, path: '/SHOP' }, actor), undefined);
      assert.equal(registry.list().length, 3);
    } finally {
      migrated.close();
    }
  });
});
