/**
 * A service's `rules` and `corsPreflight` (design.md §4.18) in the registry: validation (each
 * field, its message), normalisation, storage in their columns, the audit diff of an update, the
 * registry document's export → apply round trip.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Actor, AuditRecord } from '../../admin/audit-log.js';
import { parseServiceCreate, parseServiceUpdate } from '../../admin/registry/service-validation.js';
import { tempRegistry, type TempRegistry } from '../support/temp-registry.js';
import { refusalFields } from '../support/validation-refusal.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };
const valid = { name: 'App', path: '/app', targetUrl: 'http://app:8080' };
const groups = (...names: string[]) => ({ groups: names, emails: [], emailDomains: [], subjects: [] });

const refusal = refusalFields;

/** The reason given for `rules` when a create body carries `rules`. */
const rulesReason = (rules: unknown): string | undefined => refusal(() => parseServiceCreate({ ...valid, rules }))?.rules;

describe('rules: validation', () => {
  it('defaults: no rules, preflights as any request', () => {
    const parsed = parseServiceCreate(valid);
    assert.deepEqual([parsed.rules, parsed.corsPreflight], [[], 'auth']);
    assert.deepEqual(parseServiceUpdate({ name: 'x' }), { name: 'x' }, 'a PUT sets them only when given');
  });

  it('normalises: paths and methods kept once, methods only when given, access only with require (null for none)', () => {
    const parsed = parseServiceCreate({
      ...valid,
      rules: [
        { paths: ['/hooks/*', '/hooks/*'], methods: ['POST', 'POST'], action: 'public' },
        { paths: ['/admin'], action: 'require' },
        { paths: ['/ops'], action: 'require', access: { groups: ['ops', ' ops'] } },
        { paths: ['/'], methods: ['DELETE'], action: 'deny' },
      ],
      corsPreflight: 'public',
    });
    assert.deepEqual(parsed.rules, [
      { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
      { paths: ['/admin'], action: 'require', access: null },
      { paths: ['/ops'], action: 'require', access: groups('ops') },
      { paths: ['/'], methods: ['DELETE'], action: 'deny' },
    ]);
    assert.equal(parsed.corsPreflight, 'public');
  });

  it('each field of a rule, with a message naming it', () => {
    assert.equal(rulesReason('x'), 'must be a list of rules');
    assert.equal(rulesReason(Array.from({ length: 65 }, () => ({ paths: ['/a'], action: 'deny' }))), 'must have at most 64 rules');
    assert.equal(rulesReason([null]), 'must contain only objects ({ paths, methods?, action, access?, maxAge?, acr? })');
    assert.equal(rulesReason([{ action: 'deny' }]), 'each rule needs paths and action (a rule lacks "paths")');
    assert.equal(rulesReason([{ paths: [], action: 'deny' }]), 'paths must not be empty');
    assert.equal(rulesReason([{ paths: 'x', action: 'deny' }]), 'paths must be a list of paths');
    assert.equal(rulesReason([{ paths: ['hooks'], action: 'deny' }]), 'paths must start with / (got "hooks")');
    assert.equal(rulesReason([{ paths: ['/hooks/'], action: 'deny' }]), 'paths must not end with / (got "/hooks/")');
    assert.equal(rulesReason([{ paths: ['/a//b'], action: 'deny' }]), 'paths must not contain an empty segment (//) (got "/a//b")');
    assert.equal(rulesReason([{ paths: ['/a/../b'], action: 'deny' }]), 'paths must not contain a . or .. segment (got "/a/../b")');
    assert.equal(rulesReason([{ paths: ['/a%2Fb'], action: 'deny' }]), 'paths segments may only contain A-Z a-z 0-9 . _ ~ -, or be * (got "/a%2Fb")');
    assert.equal(rulesReason([{ paths: ['/a*'], action: 'deny' }]), 'paths segments may only contain A-Z a-z 0-9 . _ ~ -, or be * (got "/a*")');
    assert.equal(rulesReason([{ paths: ['/a'], methods: ['get'], action: 'deny' }]), 'methods must be HTTP methods in capitals, such as GET (got "get")');
    assert.equal(rulesReason([{ paths: ['/a'], methods: [], action: 'deny' }]), 'methods must not be empty (leave it out for every method)');
    assert.equal(rulesReason([{ paths: ['/a'], action: 'allow' }]), 'action must be public, deny or require (got "allow")');
    assert.equal(rulesReason([{ paths: ['/a'], action: 'public', access: groups('x') }]), 'access is only for a rule whose action is require');
    // step-up's own fields: test/admin/step-up-fields.test.ts
    assert.equal(rulesReason([{ paths: ['/a'], action: 'public', maxAge: 300 }]), 'maxAge is only for a rule whose action is require');
    assert.equal(rulesReason([{ paths: ['/a'], action: 'deny', path: '/b' }]), 'a rule has an unknown field "path"');
    assert.deepEqual(refusal(() => parseServiceCreate({ ...valid, corsPreflight: 'yes' })), { corsPreflight: 'must be auth or public (got "yes")' });
    assert.deepEqual(refusal(() => parseServiceUpdate({ rules: [{ paths: ['/a'] }] })), { rules: 'each rule needs paths and action (a rule lacks "action")' });
  });
});

describe('rules: in the registry', () => {
  let t: TempRegistry;
  beforeEach(() => {
    t = tempRegistry('gatehouse-rules-');
  });
  afterEach(() => t.close());

  const lastAudit = (): AuditRecord => t.audit.list(1, 0).logs[0]!;
  const rules = [
    { paths: ['/hooks/*'], methods: ['POST'], action: 'public' as const },
    { paths: ['/admin'], action: 'require' as const, access: groups('admins') },
  ];

  it('stored in their columns, answered, published; an update audited with before and after', async () => {
    const created = await t.registry.create({ ...valid, rules, corsPreflight: 'public' }, actor);
    assert.deepEqual([created.rules, created.corsPreflight], [rules, 'public']);
    assert.deepEqual(t.db.prepare('SELECT rules, cors_preflight FROM services').get(), { rules: JSON.stringify(rules), cors_preflight: 'public' });
    assert.deepEqual(t.registry.get(created.id), created);
    assert.deepEqual(t.snapshots.at(-1)![0]!.rules, rules);
    const newRules = [{ paths: ['/internal'], action: 'deny' as const }];
    await t.registry.update(created.id, { rules: newRules, corsPreflight: 'auth' }, actor);
    assert.deepEqual(JSON.parse(lastAudit().details).changes, { rules: { before: rules, after: newRules }, corsPreflight: { before: 'public', after: 'auth' } });
    const again = await t.registry.update(created.id, { rules: newRules }, actor);
    assert.equal(again.updatedAt, t.registry.get(created.id).updatedAt, 'the same rules again are no change');
  });

  it('export → apply: the document carries them, applying it changes nothing; a changed rule is planned as an update', async () => {
    await t.registry.create({ ...valid, rules, corsPreflight: 'public' }, actor);
    await t.registry.create({ ...valid, name: 'Other', path: '/other' }, actor);
    const document = t.registry.exportDocument();
    assert.deepEqual(document.services.map((s) => [s.path, s.rules, s.corsPreflight]), [
      ['/app', rules, 'public'],
      ['/other', [], 'auth'],
    ]);
    const plan = await t.registry.apply(JSON.parse(JSON.stringify(document)), actor, { dryRun: false });
    assert.deepEqual(plan.unchanged, ['/app', '/other']);
    const changed = { ...document, services: document.services.map((s) => (s.path === '/other' ? { ...s, rules: [{ paths: ['/x'], action: 'deny' }] } : s)) };
    const update = await t.registry.apply(changed, actor, { dryRun: true });
    assert.deepEqual(update.update.map((u) => [u.path, u.changes]), [['/other', { rules: { before: [], after: [{ paths: ['/x'], action: 'deny' }] } }]]);
  });
});
