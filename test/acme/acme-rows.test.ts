/**
 * The ACME tables (admin/acme/acme-rows.ts, design.md §4.15) and the renewal policy: one order per
 * host at a time across processes sharing the database (the lease), private keys sealed at rest
 * (the refresh tokens' cipher, bound to their host), renewal at two thirds of the lifetime, retries
 * doubling from 10 s to 6 hours.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { AcmeRows } from '../../admin/acme/acme-rows.js';
import { renewalTime, retryDelay } from '../../admin/acme/renewal-policy.js';
import { TokenCipher } from '../../shared/identity/token-encryption.js';
import { tempDatabase } from '../support/temp-database.js';

const temp = tempDatabase();
after(() => temp.close());
const rows = new AcmeRows(temp.db, new TokenCipher([randomBytes(32)]));
const issued = { certPem: 'CERT', keyPem: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n', issuer: 'CA', notBefore: 0, notAfter: 90, renewAt: 60 };

test('a host\'s order lease is held by one process at a time, until it is released or lapses', () => {
  rows.ensure(['a.example.com']);
  assert.equal(rows.lease('a.example.com', 'admin-1', 1_000, 2_000), true);
  assert.equal(rows.lease('a.example.com', 'admin-2', 1_500, 2_500), false, 'another process waits');
  assert.equal(rows.lease('a.example.com', 'admin-2', 2_001, 3_000), true, 'a lapsed lease (a crashed holder) is taken');
  rows.failed('a.example.com', 'admin-1', 'too late', 10_000);
  assert.equal(rows.list()[0]!.lastError, null, 'a holder that lost the lease writes nothing');
  rows.issued('a.example.com', 'admin-2', issued);
  assert.equal(rows.lease('a.example.com', 'admin-1', 2_100, 3_100), true, 'released with the result');
});

test('the private key is sealed at rest and opens only for its own host', () => {
  rows.ensure(['b.example.com']);
  rows.lease('b.example.com', 'admin-1', 0, 1_000);
  rows.issued('b.example.com', 'admin-1', issued);
  const stored = temp.db.prepare<[], { key_sealed: string }>("SELECT key_sealed FROM acme_certificates WHERE host = 'b.example.com'").get()!;
  assert.doesNotMatch(stored.key_sealed, /PRIVATE KEY|secret/);
  assert.equal(rows.privateKey('b.example.com'), issued.keyPem);
  temp.db.prepare("UPDATE acme_certificates SET key_sealed = ? WHERE host = 'a.example.com'").run(stored.key_sealed);
  assert.throws(() => rows.privateKey('a.example.com'), 'a sealed key copied to another host does not open');
});

test('failures are counted in a row and cleared by a success', () => {
  rows.ensure(['c.example.com']);
  for (const [holder, now] of [['x', 0], ['x', 10]] as const) {
    rows.lease('c.example.com', holder, now, now + 5);
    rows.failed('c.example.com', holder, 'CA down', now + 10);
  }
  assert.deepEqual(rows.list().find((row) => row.host === 'c.example.com')!.failures, 2);
  rows.lease('c.example.com', 'x', 20, 25);
  rows.issued('c.example.com', 'x', issued);
  const row = rows.list().find((entry) => entry.host === 'c.example.com')!;
  assert.deepEqual([row.failures, row.lastError, row.retryAt], [0, null, null]);
});

test('renewal at two thirds of the lifetime; retries 10 s, doubling, at most 6 hours apart', () => {
  assert.equal(renewalTime(0, 90 * 86_400_000), 60 * 86_400_000);
  assert.equal(renewalTime(1_000, 31_000), 21_000);
  assert.deepEqual([1, 2, 3, 4].map(retryDelay), [10_000, 20_000, 40_000, 80_000]);
  assert.equal(retryDelay(40), 6 * 3600_000);
});
