import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_SERVICES, TrafficRollups } from '../../admin/access-log/traffic-rollups.js';
import { openDatabase } from '../../admin/database.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';

test('the charts count a summary record for the requests it stands for (a flood refused by the rate limit shows as its size)', () => {
  const db = openDatabase(':memory:');
  try {
    const rollups = new TrafficRollups(db);
    const now = Date.now();
    const record = (statusCode: number, count?: number): AccessLogEntry => ({
      eventId: eventId(now), serviceId: 'svc', userId: null, path: '/app/x', method: 'GET',
      statusCode, responseTimeMs: 1, ipAddress: '198.18.0.7', timestamp: now, target: null, ...(count === undefined ? {} : { count }),
    });
    db.transaction(() => rollups.add([record(200), record(429, 195)]))();
    const minute = rollups.series('svc', '1h', now).points.at(-1)!;
    assert.equal(minute['2xx'], 1);
    assert.equal(minute['4xx'], 195);
    assert.equal(minute.requests, 196);
    assert.equal(rollups.requestsSince(now).get(ALL_SERVICES), 196);
  } finally {
    db.close();
  }
});
