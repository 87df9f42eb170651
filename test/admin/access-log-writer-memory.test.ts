/**
 * The access-log writer's memory under a flood of unique long paths, as an attacker sends them
 * (README "Where access-log records go", design.md §4.11): the strings a day file's writer
 * remembers (its dictionary codes and once-seen paths) are bounded in bytes, whatever the paths,
 * and keep the format's behaviour (a path seen twice is stored as a code); and the process that
 * runs the real writer thread does not grow with what the flood sends.
 *
 * Before, both were bounded in count (200,000 strings each): 200,000 paths of 15 KB are 3 GB.
 * The paths here are 15 KB (Node's header limit is the only ceiling on what a proxy receives; the
 * proxy cuts the stored path to 2,048 bytes, but records reach the writer from many proxies over
 * Redis, and the writer does not rely on it).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AccessLogReader } from '../../admin/access-log/reading/access-log-reader.js';
import { openAccessLogWriter } from '../../admin/access-log/writing/access-log-writer.js';
import { DayWriter, type DayGroup } from '../../admin/access-log/writing/day-writer.js';
import { accessLogDirOf, createDayFile, dayOf, openDayFile } from '../../admin/access-log/day-files.js';
import { DAY_SCHEMA } from '../../admin/access-log/day-schema.js';
import { openDatabase } from '../../admin/database.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { UNBOUNDED } from '../support/temp-database.js';

/** A 15 KB path, unique by `n`. */
const PAD = 'A'.repeat(15_000);
const longPath = (n: number): string => `/public-echo/${n}/${PAD}`;
/** A client address of its own per record, so no address reaches its share of the day (address-shares.ts). */
const addressOf = (n: number): string => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
const SERVICE = randomUUID();

function record(n: number, path: string, timestamp = Date.now()): AccessLogEntry {
  return { eventId: randomUUID(), serviceId: SERVICE, userId: null, path, method: 'GET', statusCode: 429, responseTimeMs: 1, ipAddress: addressOf(n), timestamp };
}

/** A temporary folder, removed after `run`. */
async function inTempFolder(run: (folder: string) => Promise<void> | void): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'gatehouse-writer-memory-'));
  try {
    await run(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

test("a day file's writer keeps the strings it remembers within their byte bound, however many unique 15 KB paths come; a path seen twice still gets a code", () =>
  inTempFolder((folder) => {
    const bound = 2 ** 20; // 1 MiB each for codes and once-seen paths: about 34 paths of 15 KB
    const paths = 2_000; // each seen twice, and as many seen once: 90 MB of paths, each bound exceeded about 60 times over
    const timestamp = Date.UTC(2025, 0, 1, 12);
    const day = dayOf(timestamp);
    createDayFile(folder, day, DAY_SCHEMA);
    const writer = new DayWriter(folder, day, 1 << 20, { stringBytes: bound });
    let most = 0;
    try {
      for (let first = 0; first < paths; first += 50) {
        // Each path twice in a row (the second sighting is stored as the dictionary's code), then one seen once.
        const records = Array.from({ length: 50 }, (_, i) => {
          const n = first + i;
          return [record(n, longPath(n), timestamp), record(n, longPath(n), timestamp), record(n, longPath(-1 - n), timestamp)];
        }).flat();
        const group: DayGroup = { key: Buffer.from(randomUUID()), records };
        assert.equal(writer.write([group]).stored, 150);
        most = Math.max(most, writer.stringMemoryBytes);
      }
    } finally {
      writer.close();
    }
    assert.ok(most <= 2 * bound, `at most ${most} bytes remembered, bound 2 × ${bound}`);
    assert.ok(most > bound, `the bound is what limits it (${most} bytes remembered at most)`);

    const db = openDayFile(folder, day, true);
    try {
      const kinds = db.prepare('SELECT typeof(path) AS kind, count(*) AS n FROM records GROUP BY kind ORDER BY kind').all();
      assert.deepEqual(kinds, [{ kind: 'integer', n: paths }, { kind: 'text', n: 2 * paths }], 'a path seen twice is stored as text, then as its code; one seen once as text');
    } finally {
      db.close();
    }
    const reader = new AccessLogReader(folder);
    try {
      const page = reader.listForService(SERVICE, 4, 0);
      assert.equal(page.total, 3 * paths);
      assert.deepEqual(page.logs.map((log) => log.path), [-paths, paths - 1, paths - 1, 1 - paths].map(longPath), 'codes read back as their paths');
    } finally {
      reader.close();
    }
  }));

/**
 * Most the process may grow by while the real writer thread stores {@link FLOOD_PATHS} unique
 * 15 KB paths (300 MB), in bytes: the remembered strings (32 MiB at most per open day file) and
 * what the garbage collector has not yet reclaimed of the batches (measured: ~140 MB; before, the
 * process grew by what the paths take, ~400 MB here).
 */
const RSS_GROWTH_BOUND = 200 * 2 ** 20;
const FLOOD_PATHS = 20_000;

test(`under a flood of ${FLOOD_PATHS.toLocaleString('en-US')} unique 15 KB paths, the process running the writer thread grows by less than ${RSS_GROWTH_BOUND / 2 ** 20} MB`, { timeout: 60_000 }, () =>
  inTempFolder(async (folder) => {
    const databasePath = join(folder, 'gateway.db');
    openDatabase(databasePath).close();
    const writer = openAccessLogWriter({ databasePath, dir: accessLogDirOf(databasePath), retentionDays: 30, budget: UNBOUNDED, export: undefined }, () => {});
    try {
      let n = 0;
      const batch = () => batchOf(Array.from({ length: 100 }, () => record(n, longPath(n++))));
      await writer.store(batch()); // the thread, its files and statements in place
      const before = process.memoryUsage().rss;
      let most = before;
      while (n < FLOOD_PATHS) {
        await writer.store(batch());
        most = Math.max(most, process.memoryUsage().rss);
      }
      assert.equal(writer.totals.stored, FLOOD_PATHS);
      const growth = most - before;
      assert.ok(growth < RSS_GROWTH_BOUND, `grew by ${Math.round(growth / 2 ** 20)} MB (from ${Math.round(before / 2 ** 20)} MB)`);
    } finally {
      await writer.close();
    }
  }));
