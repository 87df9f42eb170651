/**
 * Step-up's fields (design.md §4.18) in the registry: `maxAge` and `acr` on a service and on a
 * `require` rule: validation (each field, its message), normalisation, storage (the migration's
 * columns, a rule's JSON), the audit diff of an update, export → apply, the console's rule line.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Actor, AuditRecord } from '../../admin/audit-log.js';
import { ruleLine } from '../../admin/console/rule-text.js';
import { parseServiceCreate, parseServiceUpdate } from '../../admin/registry/service-validation.js';
import type { GatewayError } from '../../shared/errors.js';
import { tempRegistry, type TempRegistry } from '../support/temp-registry.js';
import { refusalFields } from '../support/validation-refusal.js';

const actor: Actor = { userId: 'admin-sub', ipAddress: '203.0.113.7' };
const valid = { name: 'App', path: '/app', targetUrl: 'http://app:8080' };

const refusal = refusalFields;

const serviceRefusal = (fields: Record<string, unknown>) => refusal(() => parseServiceCreate({ ...valid, ...fields }));
const rulesReason = (rule: Record<string, unknown>) => serviceRefusal({ rules: [{ paths: ['/a'], action: 'require', ...rule }] })?.rules;

describe('step-up fields: validation', () => {
  it('a service: none by default (null), any whole number of seconds up to a year, 1-8 acr values kept once', () => {
    const none = parseServiceCreate(valid);
    assert.deepEqual([none.maxAge, none.acr], [null, null]);
    const set = parseServiceCreate({ ...valid, maxAge: 0, acr: ['urn:mace:incommon:iap:silver', 'mfa', 'mfa'] });
    assert.deepEqual([set.maxAge, set.acr], [0, ['urn:mace:incommon:iap:silver', 'mfa']]);
    assert.equal(parseServiceCreate({ ...valid, maxAge: 31_536_000 }).maxAge, 31_536_000);
    assert.deepEqual(parseServiceUpdate({ maxAge: null, acr: null }), { maxAge: null, acr: null }, 'a PUT removes them with null');
  });

  it('a service: each wrong value with its reason', () => {
    assert.deepEqual(serviceRefusal({ maxAge: -1 }), { maxAge: 'must be at least 0' });
    assert.deepEqual(serviceRefusal({ maxAge: 1.5 }), { maxAge: 'must be a whole number of seconds' });
    assert.deepEqual(serviceRefusal({ maxAge: '300' }), { maxAge: 'must be a number of seconds' });
    assert.deepEqual(serviceRefusal({ maxAge: 31_536_001 }), { maxAge: 'must be at most 31536000 (a year)' });
    assert.deepEqual(serviceRefusal({ acr: [] }), { acr: 'must not be empty (leave it out, or null, for any)' });
    assert.deepEqual(serviceRefusal({ acr: 'mfa' }), { acr: 'must be a list of acr values' });
    assert.deepEqual(serviceRefusal({ acr: Array.from({ length: 9 }, (_, i) => `a${i}`) }), { acr: 'must have at most 8 values' });
    for (const bad of ['two words', 'quote"d', 'comma,s', 'back\\slash', '', 'é']) {
      assert.match(serviceRefusal({ acr: [bad] })?.acr ?? '', /^values must be 1-200 visible ASCII characters/, JSON.stringify(bad));
    }
    assert.deepEqual(serviceRefusal({ requireAuth: false, maxAge: 60, acr: ['mfa'] }), { maxAge: 'needs requireAuth', acr: 'needs requireAuth' });
  });

  it('a require rule: its own maxAge and acr, messages naming the field; only with require', () => {
    const parsed = parseServiceCreate({ ...valid, rules: [{ paths: ['/admin'], action: 'require', maxAge: 300, acr: ['mfa', 'mfa'] }, { paths: ['/b'], action: 'require' }] });
    assert.deepEqual(parsed.rules, [
      { paths: ['/admin'], action: 'require', access: null, maxAge: 300, acr: ['mfa'] },
      { paths: ['/b'], action: 'require', access: null },
    ]);
    assert.equal(rulesReason({ maxAge: -5 }), 'maxAge must be at least 0');
    assert.equal(rulesReason({ maxAge: null }), 'maxAge must be a number of seconds');
    assert.equal(rulesReason({ acr: [] }), 'acr must not be empty (leave it out, or null, for any)');
    assert.match(rulesReason({ acr: ['a b'] }) ?? '', /^acr values must be 1-200 visible ASCII/);
    assert.equal(serviceRefusal({ rules: [{ paths: ['/a'], action: 'deny', acr: ['mfa'] }] })?.rules, 'acr is only for a rule whose action is require');
  });
});

describe('step-up fields: in the registry', () => {
  let t: TempRegistry;
  beforeEach(() => {
    t = tempRegistry('gatehouse-step-up-');
  });
  afterEach(() => t.close());
  const lastAudit = (): AuditRecord => t.audit.list(1, 0).logs[0]!;
  const rules = [{ paths: ['/billing'], action: 'require' as const, access: null, maxAge: 60, acr: ['hwk'] }];

  it('stored in their columns, answered, published; an update audited; a PUT turning requireAuth off is refused', async () => {
    const created = await t.registry.create({ ...valid, maxAge: 300, acr: ['mfa'], rules }, actor);
    assert.deepEqual([created.maxAge, created.acr, created.rules], [300, ['mfa'], rules]);
    assert.deepEqual(t.db.prepare('SELECT max_age, acr FROM services').get(), { max_age: 300, acr: '["mfa"]' });
    assert.deepEqual(t.registry.get(created.id), created);
    assert.deepEqual([t.snapshots.at(-1)![0]!.maxAge, t.snapshots.at(-1)![0]!.rules], [300, rules]);
    await t.registry.update(created.id, { maxAge: null, acr: ['mfa', 'hwk'] }, actor);
    assert.deepEqual(JSON.parse(lastAudit().details).changes, { maxAge: { before: 300, after: null }, acr: { before: ['mfa'], after: ['mfa', 'hwk'] } });
    await assert.rejects(t.registry.update(created.id, { requireAuth: false }, actor), (error: GatewayError) => error.fields?.acr === 'needs requireAuth');
  });

  it('export → apply: the document carries them and applying it changes nothing', async () => {
    await t.registry.create({ ...valid, maxAge: 0, rules }, actor);
    const document = t.registry.exportDocument();
    assert.deepEqual(document.services.map((s) => [s.maxAge, s.acr, s.rules]), [[0, null, rules]]);
    const plan = await t.registry.apply(JSON.parse(JSON.stringify(document)), actor, { dryRun: false });
    assert.deepEqual(plan.unchanged, ['/app']);
  });

  it("the console's rule line carries a rule's step-up", () => {
    assert.equal(ruleLine({ paths: ['/billing', '/admin/*'], action: 'require', access: null, maxAge: 60, acr: ['mfa', 'hwk'] }), 'require maxAge=60 acr=mfa,hwk /billing /admin/*');
  });
});
