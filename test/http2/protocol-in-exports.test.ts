/**
 * The protocol of an access-log record (design.md §4.17) where it leaves the gateway besides the
 * API: the OTLP log record's `network.protocol.version` (`2` or `1.1`, the HTTP semantic
 * conventions' values), and the batch check the admin's consumer makes (`protocol` absent or `h2`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { toOtlpLogRecord } from '../../admin/access-log/otlp/otlp-log-record.js';
import { checkRecords } from '../../shared/backends/access-log-batch.js';
import type { AccessLogEntry } from '../../shared/types.js';

const ENTRY: AccessLogEntry = {
  eventId: '0190a3b4c5d6-0001',
  serviceId: 'svc',
  userId: null,
  path: '/x',
  method: 'GET',
  statusCode: 200,
  responseTimeMs: 3,
  ipAddress: '192.0.2.1',
  timestamp: 1_700_000_000_000,
};

test('OTLP: network.protocol.version is 2 for an h2 record and 1.1 otherwise', () => {
  const resource = resourceFromAttributes({ 'service.name': 'gatehouse' });
  assert.equal(toOtlpLogRecord({ ...ENTRY, protocol: 'h2' }, resource, undefined).attributes?.['network.protocol.version'], '2');
  assert.equal(toOtlpLogRecord(ENTRY, resource, undefined).attributes?.['network.protocol.version'], '1.1');
});

test('a shipped record holds protocol h2 or none; any other value makes the record invalid', () => {
  assert.deepEqual(checkRecords(JSON.stringify([{ ...ENTRY, protocol: 'h2' }, ENTRY])), { json: JSON.stringify([{ ...ENTRY, protocol: 'h2' }, ENTRY]), count: 2, invalid: 0 });
  assert.deepEqual(checkRecords(JSON.stringify([{ ...ENTRY, protocol: 'h3' }, ENTRY])), { json: JSON.stringify([ENTRY]), count: 1, invalid: 1 });
});
