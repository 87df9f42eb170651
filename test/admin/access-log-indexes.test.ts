import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AccessLogFilter } from '../../admin/access-log/access-log-filter.js';
import { AccessLogStore, RESIDUAL_SCAN_LIMIT } from '../../admin/access-log/access-log-store.js';
import { openDatabase, type Database } from '../../admin/database.js';

/**
 * design.md §4.6: a page of a service's access log stays cheap at a million records, because every
 * query walks an index (checked with EXPLAIN QUERY PLAN, never with a timer).
 */

const SERVICE = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const ROWS = 1_000_000;
const T0 = Date.parse('2025-01-01T00:00:00Z');

let dir: string;
let db: Database;
let store: AccessLogStore;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-indexes-'));
  db = openDatabase(join(dir, 'gateway.db'));
  store = new AccessLogStore(db);
  // One transaction, one prepared statement: 90 % of the rows belong to SERVICE, one per second.
  const insert = db.prepare(
    `INSERT INTO access_logs (event_id, service_id, user_id, path, method, status_code, response_time_ms, ip_address, timestamp)
     VALUES (?, ?, ?, ?, ?, ?, ?, '10.0.0.1', ?)`,
  );
  const statuses = [200, 200, 200, 200, 200, 201, 304, 404, 500, 200];
  const methods = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const service = i % 10 === 0 ? OTHER : SERVICE;
      const user = i % 7 === 0 ? null : `user-${i % 50}`;
      insert.run(`e${i}`, service, user, `/app/items/${i % 1000}?q=${i}`, methods[i % 6]!, statuses[i % 10]!, i % 300, T0 + i * 1000);
    }
  })();
});
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const FILTERS: [string, AccessLogFilter, string][] = [
  ['no filter', {}, 'access_logs_by_service_time'],
  ['status class', { statusClass: 5 }, 'access_logs_by_service_class_time'],
  ['user', { userId: 'user-3' }, 'access_logs_by_service_user_time'],
  ['time range', { from: T0 + 100 * HOUR, to: T0 + 101 * HOUR }, 'access_logs_by_service_time'],
  ['status class and time range', { statusClass: 4, from: T0 + 10 * HOUR, to: T0 + 20 * HOUR }, 'access_logs_by_service_class_time'],
  ['user, status class and time range', { userId: 'user-3', statusClass: 2, from: T0, to: T0 + 50 * HOUR }, 'access_logs_by_service_user_time'],
  ['method', { method: 'DELETE' }, 'access_logs_by_service_time'],
  ['path substring', { pathContains: 'items/42?' }, 'access_logs_by_service_time'],
  ['path substring, method and status class', { pathContains: '/app/', method: 'GET', statusClass: 2 }, 'access_logs_by_service_class_time'],
];

/** How many of SERVICE's seeded rows (all, or only its newest `newest`) pass `keep`, by row number. */
function countSeeded(keep: (i: number) => boolean, options: { newest?: number } = {}): number {
  let seen = 0;
  let kept = 0;
  for (let i = ROWS - 1; i >= 0 && seen < (options.newest ?? Infinity); i--) {
    if (i % 10 === 0) continue;
    seen++;
    if (keep(i)) kept++;
  }
  return kept;
}

describe(`access-log queries at ${ROWS.toLocaleString('en')} records`, () => {
  for (const [name, filter, index] of FILTERS) {
    it(`${name}: every statement searches ${index}, never scans the table or sorts`, () => {
      const plans = store.explain(filter);
      for (const [statement, plan] of Object.entries(plans)) {
        const text = plan.join('\n');
        assert.match(text, new RegExp(`SEARCH access_logs USING (COVERING )?INDEX ${index} \\(service_id=\\?`), `${statement}:\n${text}`);
        assert.doesNotMatch(text, /SCAN access_logs|TEMP B-TREE/, `${statement}:\n${text}`);
      }
    });
  }

  it('answers: newest first, total of the matches', () => {
    const page = store.listForService(SERVICE, 3, 0);
    assert.equal(page.total, ROWS * 0.9);
    assert.deepEqual(page.logs.map((log) => log.timestamp), [ROWS - 1, ROWS - 2, ROWS - 3].map((i) => new Date(T0 + i * 1000).toISOString()));
    const errors = store.listForService(SERVICE, 5, 0, { statusClass: 5, from: T0, to: T0 + HOUR });
    assert.equal(errors.total, 360);
    assert.ok(errors.logs.every((log) => log.status_code === 500));
  });

  it(`method and path look at the newest ${RESIDUAL_SCAN_LIMIT.toLocaleString('en')} candidates, and say so`, () => {
    const wide = store.listForService(SERVICE, 10, 0, { method: 'DELETE' });
    assert.equal(wide.partial, true);
    assert.equal(wide.total, countSeeded((i) => i % 6 === 5, { newest: RESIDUAL_SCAN_LIMIT }));
    const narrow = store.listForService(SERVICE, 10, 0, { method: 'DELETE', from: T0, to: T0 + HOUR });
    assert.equal(narrow.partial, undefined);
    assert.equal(narrow.total, countSeeded((i) => i % 6 === 5 && i < 3600));
  });
});
