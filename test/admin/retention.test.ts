/**
 * What the access log keeps (README: ACCESS_LOG_RETENTION_DAYS, ACCESS_LOG_MAX_SIZE): a day's file
 * is deleted whole once the day ended more than the retention ago, and the oldest days go first
 * (never the newest) while the files exceed the budget or the disk's free space its reserve; when
 * even the newest day cannot grow, records are discarded and counted with one warning, and storing
 * goes on. Traffic rollups outlive the raw records and are pruned after 400 days, in batches.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { AccessLogStore } from '../../admin/access-log/writing/access-log-store.js';
import type { AccessLogStoreOptions, StoreNotice } from '../../admin/access-log/writing/store-options.js';
import { dayName, dayOf, listDays } from '../../admin/access-log/day-files.js';
import { filesystemOf } from '../../admin/access-log/writing/disk-budget.js';
import { pruneRollups, ROLLUP_RETENTION_DAYS } from '../../admin/access-log/writing/retention.js';
import { ConfigError, loadConfig } from '../../shared/config/config.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { tempDatabase, type TempDatabase } from '../support/temp-database.js';

const DAY = 86_400_000;
const JAN_1 = Date.UTC(2025, 0, 1);
const SERVICE = randomUUID();

let t: TempDatabase | undefined;
let now = 0;
let notices: StoreNotice[] = [];
let sequence = 0;

/** A store whose clock is `now` and whose notices go to `notices`, with `options`. */
function open(options: Partial<AccessLogStoreOptions> = {}): TempDatabase {
  notices = [];
  sequence = 0; // the same records, hence the same file sizes, on every run
  t = tempDatabase({ now: () => now, notify: (notice) => notices.push(notice), ...options });
  return t;
}
afterEach(() => {
  t?.close();
  t = undefined;
});

function recordAt(timestamp: number): AccessLogEntry {
  const n = sequence++;
  return { eventId: randomUUID(), serviceId: SERVICE, userId: `user-${n % 20}`, path: `/items/${n}?q=${n}`, method: 'GET', statusCode: 200, responseTimeMs: 3, ipAddress: '192.0.2.1', timestamp };
}
/** `count` records in `day` (days since JAN_1), a second apart from `offsetMs` into the day. */
const recordsOn = (day: number, count: number, offsetMs = 0) => Array.from({ length: count }, (_, i) => recordAt(JAN_1 + day * DAY + offsetMs + i * 1000));

const total = (filter = {}) => t!.accessLogs.listForService(SERVICE, 1, 0, filter).total;
const totalOn = (day: number) => total({ from: JAN_1 + day * DAY, to: JAN_1 + (day + 1) * DAY });
const days = () => listDays(t!.dir).map(dayName).reverse();
const rolledUp = () => (t!.db.prepare('SELECT sum(count_2xx) AS n FROM access_rollups WHERE service_id = ?').get(SERVICE) as { n: number | null }).n ?? 0;
/** Bytes of the day files and their write-ahead logs, as `du` would count them. */
const diskBytes = () =>
  readdirSync(t!.dir)
    .filter((name) => /\.sqlite(-wal)?$/.test(name))
    .reduce((sum, name) => sum + statSync(join(t!.dir, name)).size, 0);
/** The warnings that the access log is full (a day deleted to keep the budget is warned about too). */
const warnings = () => notices.filter((notice) => notice.level === 'warn' && notice.message.startsWith('access log full'));
const deleted = () => notices.filter((notice) => notice.message.includes('deleted a day')).map((notice) => notice.fields);

describe('retention by age', () => {
  it('deletes the file of a day that ended more than the retention ago; newer days and the rollups stay', () => {
    now = JAN_1 + 3 * DAY;
    open({ retentionDays: 30 });
    for (const day of [0, 1, 2]) t!.store.insertBatch(recordsOn(day, 10));
    assert.deepEqual(days(), ['2025-01-01', '2025-01-02', '2025-01-03']);
    assert.equal(total(), 30);

    now = JAN_1 + 31 * DAY - 1; // Jan 1 ended 30 days ago less 1 ms
    t!.store.enforceLimits();
    assert.deepEqual(days(), ['2025-01-01', '2025-01-02', '2025-01-03']);

    now = JAN_1 + 31 * DAY;
    t!.store.enforceLimits();
    assert.deepEqual(days(), ['2025-01-02', '2025-01-03']);
    assert.ok(!readdirSync(t!.dir).some((name) => name.startsWith('2025-01-01')), 'its file, WAL and shared memory are gone');
    assert.deepEqual(deleted(), [{ day: '2025-01-01', reason: 'retention' }]);
    assert.equal(total(), 20);
    assert.equal(totalOn(0), 0);
    assert.equal(rolledUp(), 30, 'the rollups outlive the raw records');
  });

  it('counts late records for a deleted day as expired, does not store them, and still counts them in the rollups', () => {
    now = JAN_1 + 40 * DAY;
    open({ retentionDays: 30 });
    t!.store.insertBatch([...recordsOn(5, 2), ...recordsOn(20, 3)]); // Jan 6 expired, Jan 21 kept
    assert.deepEqual(days(), ['2025-01-21']);
    assert.equal(total(), 3);
    assert.deepEqual({ stored: t!.store.totals.stored, expired: t!.store.totals.expired }, { stored: 3, expired: 2 });
    assert.equal(rolledUp(), 5);
  });
});

describe('retention by size (ACCESS_LOG_MAX_SIZE)', () => {
  const maxBytes = 2_000_000;
  /**
   * Stores `perDay` records on each of 8 days from Jan 1, in batches of `perBatch`, under a budget
   * of `maxBytes`; `afterEach` runs after every batch with the day's number.
   */
  const fill = (perDay: number, perBatch: number, afterEach: (day: number) => void = () => {}) => {
    now = JAN_1 + 20 * DAY;
    open({ budget: { maxBytes, reserveBytes: 0 } });
    for (let day = 0; day < 8; day++) {
      for (let batch = 0; batch < perDay / perBatch; batch++) {
        t!.store.insertBatch(recordsOn(day, perBatch, batch * perBatch * 1000));
        afterEach(day);
      }
    }
  };

  it('deletes the oldest days first, never the newest', () => {
    fill(4000, 200, (day) => {
      const kept = listDays(t!.dir);
      assert.equal(kept[0], dayOf(JAN_1) + day, 'the newest day is kept');
      assert.deepEqual(kept, kept.map((_, i) => kept[0]! - i), 'the days kept are the newest ones');
    });
    const kept = days();
    assert.ok(kept.length >= 2 && kept.length < 8, `${kept.join(', ')} kept`);
    assert.deepEqual(deleted(), Array.from({ length: 8 - kept.length }, (_, day) => ({ day: dayName(dayOf(JAN_1) + day), reason: 'max_size', records: 4000 })));
    assert.ok(notices.filter((notice) => notice.message.includes('deleted a day')).every((notice) => notice.level === 'warn'), 'deleting a day to keep the budget is warned about');
    assert.deepEqual(t!.store.totals.daysDeleted, { retention: 0, max_size: 8 - kept.length, disk_reserve: 0 });
    assert.equal(totalOn(7), 4000, 'the newest day is whole');
    assert.equal(total(), kept.length * 4000);
    assert.equal(t!.store.totals.discarded, 0);
    assert.equal(rolledUp(), 32_000, 'the rollups count every record');
  });

  for (const [perDay, perBatch] of [[2000, 200], [2500, 100], [4000, 200]] as const) {
    it(`keeps the files under the cap after every batch (${perDay} records a day in batches of ${perBatch})`, () => {
      let most = 0;
      fill(perDay, perBatch, () => (most = Math.max(most, diskBytes())));
      assert.ok(most <= maxBytes, `${most} bytes on disk at most`);
    });
  }

  it('spends the budget on records: days of 2,500 records (about 250 kB each once written out) keep three days or more in 2 MB', () => {
    fill(2500, 100);
    assert.ok(days().length >= 3, `only ${days().join(', ')} kept`);
  });

  it('counts (does not throw on) a late record for a day older than every kept day while the log is at its cap', () => {
    now = JAN_1 + 5 * DAY;
    open({ budget: { maxBytes: 1_000_000, reserveBytes: 0 } });
    for (let batch = 0; t!.store.totals.discarded === 0 && batch < 800; batch++) t!.store.insertBatch(recordsOn(2, 100, batch * 100_000));
    assert.ok(t!.store.totals.discarded > 0, 'Jan 3 is full');
    const before = { ...t!.store.totals };
    assert.doesNotThrow(() => t!.store.insertBatch(recordsOn(1, 1)));
    const after = t!.store.totals;
    assert.equal(after.expired + after.discarded, before.expired + before.discarded + 1);
    assert.equal(totalOn(1), 0);
  });
});

describe('a full access log', () => {
  const maxBytes = 400_000;
  /**
   * Stores 6,000 records (60 batches of 100) on each of `days` days from Jan 2, more than a budget
   * of `maxBytes` holds in one day; `afterEach` runs after every batch.
   */
  const overfill = (days: number, afterEach: () => void = () => {}) => {
    now = JAN_1 + (days + 1) * DAY;
    open({ budget: { maxBytes, reserveBytes: 0 } });
    for (let day = 1; day <= days; day++) {
      for (let batch = 0; batch < 60; batch++) {
        t!.store.insertBatch(recordsOn(day, 100, batch * 100_000));
        afterEach();
      }
    }
  };

  it('discards the records beyond the budget and counts them; what was stored stays readable; the charts count all', () => {
    overfill(1);
    const { stored, discarded } = t!.store.totals;
    assert.ok(discarded > 0 && stored > 0, `${stored} stored, ${discarded} discarded`);
    assert.equal(stored + discarded, 6000);
    assert.equal(total(), stored);
    assert.equal(rolledUp(), 6000);
  });

  it('warns once each time it becomes full, not for every batch it discards', () => {
    overfill(3);
    assert.ok(t!.store.totals.discarded > 0);
    const told = notices.map((notice) => `${notice.level}: ${notice.message}`);
    assert.equal(warnings().length, 3, `${told.length} notices:\n${told.slice(0, 12).join('\n')}`);
    assert.deepEqual(warnings().map((warning) => warning.fields), ['2025-01-02', '2025-01-03', '2025-01-04'].map((day) => ({ day, maxBytes, reserveBytes: 0 })));
  });

  it('warns once while it discards, however little room is left (less than the next batch needs)', () => {
    overfill(1);
    t!.store.close(); // its day file is written out (checkpointed): what is on disk is its pages
    notices = [];
    const store = new AccessLogStore(t!.db, {
      dir: t!.dir,
      retentionDays: 36_500,
      budget: { maxBytes: diskBytes() + 1000, reserveBytes: 0 },
      now: () => now,
      notify: (notice) => notices.push(notice),
    });
    try {
      for (let batch = 0; batch < 10; batch++) store.insertBatch(recordsOn(1, 100, 7_000_000 + batch * 100_000));
      assert.equal(store.totals.discarded, 1000);
      const told = notices.map((notice) => `${notice.level}: ${notice.message}`);
      assert.equal(warnings().length, 1, `${told.length} notices:\n${told.slice(0, 6).join('\n')}`);
    } finally {
      store.close();
    }
  });

  it('stores what fits of a call too big for the room left, batch by batch, and stays full after: one warning', () => {
    now = JAN_1 + 2 * DAY;
    open({ budget: { maxBytes: 1_000_000, reserveBytes: 0 } });
    const long = (n: number) => recordsOn(1, n, sequence * 1000).map((record) => ({ ...record, path: `/capped/${'p'.repeat(400)}${record.path}` }));
    t!.store.storeBatches([long(500), long(500)]);
    t!.store.storeBatches([long(500), long(500), long(500)]);
    const { stored, discarded } = t!.store.totals;
    assert.ok(stored > 1000 && stored % 500 === 0 && discarded > 0, `${stored} stored, ${discarded} discarded: the batches that fitted are stored`);
    for (let call = 0; call < 12; call++) t!.store.storeBatches([long(100)]);
    assert.equal(t!.store.totals.stored, stored, 'a full day stays full');
    assert.equal(warnings().length, 1);
    assert.ok(!notices.some((notice) => notice.message.includes('storing again')));
  });

  it('keeps the full day within the cap', () => {
    let most = 0;
    overfill(1, () => (most = Math.max(most, diskBytes())));
    assert.ok(most <= maxBytes, `${most} bytes on disk at most`);
  });

  it('stores the next day by deleting the full one, and says it is storing again', () => {
    overfill(1);
    const { discarded, stored } = t!.store.totals;
    now = JAN_1 + 3 * DAY;
    let batches = 0;
    while (days().includes('2025-01-02') && batches < 60) t!.store.insertBatch(recordsOn(2, 100, batches++ * 100_000));
    assert.equal(totalOn(2), batches * 100, 'every record of the new day is stored');
    assert.equal(t!.store.totals.discarded, discarded);
    assert.deepEqual(days(), ['2025-01-03']);
    assert.deepEqual(deleted(), [{ day: '2025-01-02', reason: 'max_size', records: stored }]);
    const told = notices.map((notice) => notice.message);
    assert.ok(told.lastIndexOf('access log storing again: there is room') > told.lastIndexOf(warnings().at(-1)!.message), told.join('\n'));
  });

  it("behaves as full when the disk's free space is below the reserve: older days go, the newest day stops growing", () => {
    now = JAN_1 + 5 * DAY;
    const seeded = open();
    seeded.store.insertBatch(recordsOn(0, 1));
    seeded.store.insertBatch(recordsOn(1, 1));
    seeded.store.close();
    const reserveBytes = filesystemOf(seeded.dir).freeBytes + 2 ** 30;
    const store = new AccessLogStore(seeded.db, {
      dir: seeded.dir,
      retentionDays: 36_500,
      budget: { maxBytes: 1e12, reserveBytes },
      now: () => now,
      notify: (notice) => notices.push(notice),
    });
    try {
      assert.deepEqual(days(), ['2025-01-02'], 'the older day is deleted at once');
      assert.deepEqual(deleted(), [{ day: '2025-01-01', reason: 'disk_reserve', records: 1 }]);
      for (let batch = 0; batch < 10; batch++) store.insertBatch(recordsOn(1, 100, 60_000 + batch * 100_000));
      const { stored, discarded } = store.totals;
      assert.ok(discarded > 0, `${stored} stored, ${discarded} discarded`);
      assert.equal(stored + discarded, 1000);
      assert.equal(total(), 1 + stored);
      assert.equal(warnings().length, 1);
      assert.equal(warnings()[0]!.fields.reserveBytes, reserveBytes);
    } finally {
      store.close();
    }
  });
});

describe(`rollups past ${ROLLUP_RETENTION_DAYS} days`, () => {
  const NOW = Date.parse('2025-06-01T00:00:00Z');
  const rollupRows = () => (t!.db.prepare('SELECT count(*) AS n FROM access_rollups').get() as { n: number }).n;

  it('are deleted in batches; newer rollups stay', async () => {
    now = NOW;
    open({ retentionDays: 30 });
    t!.store.insertBatch([recordAt(NOW - 401 * DAY), recordAt(NOW - 401 * DAY + 60_000), recordAt(NOW - 399 * DAY)]);
    assert.equal(t!.store.totals.expired, 3, 'the raw records are long past their retention');
    assert.equal(rollupRows(), 6, "per minute: the service's row and the all-services row");
    assert.equal(await pruneRollups(t!.db, { now: NOW, batchSize: 3 }), 4);
    assert.equal(rollupRows(), 2);
    assert.equal(rolledUp(), 1);
  });

  it('stop before the next batch when asked to', async () => {
    now = NOW;
    open();
    t!.store.insertBatch(Array.from({ length: 10 }, (_, i) => recordAt(NOW - 500 * DAY + i * 60_000)));
    let batches = 0;
    assert.equal(await pruneRollups(t!.db, { now: NOW, batchSize: 3, stopped: () => batches++ >= 2 }), 6);
    assert.equal(rollupRows(), 14);
  });
});

describe('configuration', () => {
  it('ACCESS_LOG_RETENTION_DAYS: default 30, whole days of at least 1', () => {
    assert.equal(loadConfig({}).accessLogRetentionDays, 30);
    assert.equal(loadConfig({ ACCESS_LOG_RETENTION_DAYS: '7' }).accessLogRetentionDays, 7);
    for (const bad of ['0', '1.5', '30d', '-1']) {
      assert.throws(
        () => loadConfig({ ACCESS_LOG_RETENTION_DAYS: bad }),
        (error: unknown) => error instanceof ConfigError && error.problems[0] === 'ACCESS_LOG_RETENTION_DAYS: must be a whole number of days (1 or more)',
        bad,
      );
    }
  });

  it('ACCESS_LOG_MAX_SIZE: unset by default, a size of at least 1MB', () => {
    assert.equal(loadConfig({}).accessLogMaxBytes, undefined);
    assert.equal(loadConfig({ ACCESS_LOG_MAX_SIZE: '500MB' }).accessLogMaxBytes, 500e6);
    assert.equal(loadConfig({ ACCESS_LOG_MAX_SIZE: '2GiB' }).accessLogMaxBytes, 2 ** 31);
    for (const [bad, problem] of [['0.5MB', 'must be at least 1MB'], ['lots', 'must be a size such as 50GB, 500MB or 1TiB']] as const) {
      assert.throws(
        () => loadConfig({ ACCESS_LOG_MAX_SIZE: bad }),
        (error: unknown) => error instanceof ConfigError && error.problems[0] === `ACCESS_LOG_MAX_SIZE: ${problem}`,
        bad,
      );
    }
  });
});
