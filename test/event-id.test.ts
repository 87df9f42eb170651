import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventId } from '../shared/event-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('event ids are RFC 9562 UUIDv7 carrying their time in ms', () => {
  const at = Date.UTC(2026, 10, 21, 7, 40);
  const id = eventId(at);
  assert.match(id, UUID_V7);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), at);
});

test('event ids are unique and sort in time order across pool refills', () => {
  const ids = Array.from({ length: 5000 }, (_, i) => eventId(1_800_000_000_000 + i));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  assert.ok(ids.every((id) => UUID_V7.test(id)));
});
