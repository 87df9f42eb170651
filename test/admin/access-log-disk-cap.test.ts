import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { AccessLogReader } from '../../admin/access-log/reading/access-log-reader.js';
import { accessLogDirOf, dayBytes, listDays } from '../../admin/access-log/day-files.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { parseByteSize } from '../../shared/config/byte-size.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { apiClient, createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

/**
 * ACCESS_LOG_MAX_SIZE end to end (README "Access log", design.md §3.9), embedded and split: a
 * gateway whose access log may take 1 MB serves real proxied traffic past that point. Proxying
 * never stops (every request 200); once only today's file is left and it is full, new records
 * are discarded and counted (`gatehouse_access_log_records_discarded_total` on the admin port's
 * /metrics), the warning is logged once, the day files stay within the cap, and the access-log
 * API still lists what was stored, its total equal to what the writer stored.
 *
 * To reach the cap within seconds, the records' paths are long (about 420 bytes each: a few
 * thousand records fill 1 MB, where short paths need 10–20k); in embedded mode most of the cap is
 * filled by storing records straight through the gateway's writer, as its data plane ships them.
 * A test run that crosses midnight UTC starts a new day file (and the cap deletes the old one), so
 * it may not reach the "full" state; that is not guarded against.
 *
 * Each record comes from a client address of its own (X-Forwarded-For from a TRUST_PROXY peer):
 * one address's records past its share of the day's budget would be summarised instead
 * (access-log-flood.test.ts), and the log would never fill.
 */

const CAP_TEXT = '1MB';
const CAP = parseByteSize(CAP_TEXT)!;
/**
 * How far above the cap the day files may be seen: the write-ahead log (WAL) of today's file. The
 * store sets room aside in the cap for each open file's WAL (access-log-store.ts `walBytes`, 64 KiB
 * at this cap) and checkpoints it when it holds that much, but a WAL is checkpointed only after
 * the transaction that filled it, so it may hold one more transaction's pages: copies of pages the
 * file already has (the indexes' rightmost pages, `minute_counts`, `strings`). 128 KiB covers
 * that for the batches here (in runs of this test the files, WAL included, stayed under the cap
 * itself: at most 926 KB of 1 MB).
 */
const WAL_MARGIN = 128 * 1024;
/** The warning of a full access log, and the line that says it stores again (admin/access-log/writing/access-log-store.ts). */
const WARNING = /access log full/;
const STORING_AGAIN = /access log storing again/;
/** Padding that makes each record's path long (see the module comment). */
const PAD = 'p'.repeat(400);
/** Requests in flight at once while driving traffic. */
const CONCURRENCY = 24;
/** Requests per round while filling the cap through the proxy. */
const ROUND = 400;
/**
 * Requests sent once the access log is full: enough records to fill the room under which a full
 * day stays full (access-log-store.ts `MIN_ROOM_BYTES`, 64 KiB) several times over, so a log
 * that went back to storing would be full again, and warn again, within this test.
 */
const WHILE_FULL = 600;
/** The gateways' settings: the cap, and the test client as a trusted proxy, so each request names its own client address. */
const ENV = { ACCESS_LOG_MAX_SIZE: CAP_TEXT, TRUST_PROXY: 'loopback' };
/** The client address of request or record `i`: one each. */
const addressOf = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
/** Longest a phase of driving traffic may take. */
const DRIVE_DEADLINE_MS = 20_000;

/** The access-log counters of an admin port's /metrics. */
interface AccessLogMetrics {
  stored: number;
  discarded: number;
  expired: number;
  duplicates: number;
  diskBytes: number;
  days: number;
}

/** One sample's value from a Prometheus text (labels ignored); NaN when absent. */
function sample(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

async function accessLogMetrics(adminUrl: string): Promise<AccessLogMetrics> {
  const response = await request(`${adminUrl}/metrics`);
  assert.equal(response.statusCode, 200);
  const text = await response.body.text();
  const metrics = {
    stored: sample(text, 'gatehouse_access_log_records_stored_total'),
    discarded: sample(text, 'gatehouse_access_log_records_discarded_total'),
    expired: sample(text, 'gatehouse_access_log_records_expired_total'),
    duplicates: sample(text, 'gatehouse_access_log_records_duplicates_total'),
    diskBytes: sample(text, 'gatehouse_access_log_disk_bytes'),
    days: sample(text, 'gatehouse_access_log_days'),
  };
  for (const [name, value] of Object.entries(metrics)) assert.ok(Number.isFinite(value), `${name} in /metrics:\n${text}`);
  return metrics;
}

/** Bytes the day files in `dir` take on disk now, their WALs included. */
const filesBytes = (dir: string): number => listDays(dir).reduce((sum, day) => sum + dayBytes(dir, day), 0);

/**
 * Sends `count` GETs to `path(i)` for i from `first`, spread over `origins` in turn, at most
 * {@link CONCURRENCY} at once; resolves with their statuses (0 for a request that failed).
 */
async function drive(origins: readonly string[], first: number, count: number, path: (i: number) => string): Promise<number[]> {
  const statuses: number[] = [];
  let next = first;
  const worker = async () => {
    for (let i = next++; i < first + count; i = next++) {
      try {
        const response = await request(`${origins[i % origins.length]}${path(i)}`, { headers: { 'x-forwarded-for': addressOf(i) } });
        await response.body.dump();
        statuses.push(response.statusCode);
      } catch {
        statuses.push(0);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

const statusSummary = (statuses: readonly number[]): string => {
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(', ');
};

/** What one mode's run gives the shared checks. */
interface CappedRun {
  adminUrl: string;
  databasePath: string;
  admin: { cookie: string; csrfToken: string };
  serviceId: string;
  /** Records handed to the admin's writer in all (proxied requests that matched the service, and stored ones). */
  records: number;
  /** Counters when the "full" state was first seen. */
  atFull: AccessLogMetrics;
  /** Every status the proxied requests got. */
  statuses: number[];
  /** Everything the admin plane logged so far. */
  log(): string;
}

/**
 * Proxies rounds of requests to `/capped/…` through `origins` until the admin's /metrics shows
 * records discarded, then {@link WHILE_FULL} more (paths `/capped/while-full/…`).
 * @returns the statuses, the counters when full, and how many requests were sent.
 */
async function fillThroughProxy(origins: readonly string[], adminUrl: string): Promise<{ statuses: number[]; atFull: AccessLogMetrics; sent: number }> {
  const statuses: number[] = [];
  const started = Date.now();
  let sent = 0;
  let metrics = await accessLogMetrics(adminUrl);
  while (metrics.discarded === 0) {
    assert.ok(Date.now() - started < DRIVE_DEADLINE_MS, `no record discarded after ${sent} requests in ${Date.now() - started} ms: ${JSON.stringify(metrics)}`);
    statuses.push(...(await drive(origins, sent, ROUND, (i) => `/capped/${PAD}/${i}`)));
    sent += ROUND;
    metrics = await accessLogMetrics(adminUrl);
  }
  const atFull = metrics;
  statuses.push(...(await drive(origins, sent, WHILE_FULL, (i) => `/capped/while-full/${PAD}/${i}`)));
  sent += WHILE_FULL;
  return { statuses, atFull, sent };
}

/**
 * The checks both modes share, once the writer has counted every record handed to it.
 * @returns the final counters and the bytes on disk, for the test's diagnostics.
 */
async function checkCapped(run: CappedRun): Promise<string> {
  assert.ok(run.statuses.every((status) => status === 200), `proxied requests: ${statusSummary(run.statuses)}`);

  const settled = await eventually(
    'the writer to count every record (stored, discarded, expired or a duplicate)',
    async () => {
      const m = await accessLogMetrics(run.adminUrl);
      return m.stored + m.discarded + m.expired + m.duplicates >= run.records;
    },
    15_000,
  ).then(() => accessLogMetrics(run.adminUrl));
  assert.deepEqual(
    { accounted: settled.stored + settled.discarded, expired: settled.expired, duplicates: settled.duplicates },
    { accounted: run.records, expired: 0, duplicates: 0 },
    'every record stored or counted as discarded, none lost',
  );

  const lines = run.log().split('\n');
  const warnings = lines.filter((line) => WARNING.test(line));
  assert.equal(warnings.length, 1, `the warning logged once:\n${warnings.join('\n')}`);
  assert.equal(JSON.parse(warnings[0]!).level, 40, 'at warn level');
  assert.deepEqual(lines.filter((line) => STORING_AGAIN.test(line)), [], 'full until an older day can be deleted: never "storing again" (there is no older day)');
  assert.equal(settled.stored, run.atFull.stored, 'nothing stored once full');
  assert.ok(settled.discarded >= run.atFull.discarded + WHILE_FULL, `the ${WHILE_FULL} records of requests proxied while full discarded: ${JSON.stringify({ atFull: run.atFull, settled })}`);
  assert.equal(settled.days, 1);

  const dir = accessLogDirOf(run.databasePath);
  const onDisk = filesBytes(dir);
  assert.ok(settled.diskBytes > CAP / 2, `the day file holds what was stored: ${settled.diskBytes} bytes`);
  assert.ok(settled.diskBytes <= CAP + WAL_MARGIN, `gatehouse_access_log_disk_bytes ${settled.diskBytes} ≤ ${CAP} + ${WAL_MARGIN}`);
  assert.ok(onDisk <= CAP + WAL_MARGIN, `the day files take ${onDisk} bytes ≤ ${CAP} + ${WAL_MARGIN}`);

  const call = apiClient(run.adminUrl);
  const page = await call('GET', `/api/services/${run.serviceId}/logs?limit=1000`, { as: run.admin });
  assert.equal(page.status, 200, page.text);
  assert.equal(page.json.total, settled.stored, 'the total is the number stored');
  assert.equal(page.json.logs.length, Math.min(1000, settled.stored));
  const times = page.json.logs.map((log: { timestamp: string }) => Date.parse(log.timestamp));
  assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
  for (const log of page.json.logs) {
    assert.equal(log.service_id, run.serviceId);
    assert.match(log.path, /^\/capped\//);
    assert.equal(log.status_code, 200);
  }
  const last = await call('GET', `/api/services/${run.serviceId}/logs?limit=10&offset=${settled.stored - 3}`, { as: run.admin });
  assert.equal(last.status, 200);
  assert.equal(last.json.logs.length, 3, 'the oldest records are still there');
  const whileFull = await call('GET', `/api/services/${run.serviceId}/logs?path=%2Fwhile-full%2F`, { as: run.admin });
  assert.equal(whileFull.status, 200);
  assert.equal(whileFull.json.total, 0, 'no record of a request proxied while full was stored');

  const reader = new AccessLogReader(dir);
  try {
    assert.equal(reader.listForService(run.serviceId, 1, 0).total, settled.stored, 'the day files hold what the writer counted');
  } finally {
    reader.close();
  }
  return `settled at ${JSON.stringify(settled)}, ${onDisk} bytes on disk`;
}

describe('ACCESS_LOG_MAX_SIZE=1MB, embedded', () => {
  let upstream: EchoUpstream;
  let gw: TestGateway;
  let log = '';

  before(async () => {
    upstream = await startEchoUpstream();
    gw = await startTestGateway({ LOG_LEVEL: 'info', ...ENV }, { onLog: (line) => void (log += line) });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('fills to the cap: proxying goes on, new records are discarded and counted, the warning is logged once, the API lists what was stored', async (t) => {
    const admin = await signIn(gw);
    const serviceId = await createService(gw.adminUrl, admin, { name: 'Capped', path: '/capped', targetUrl: upstream.origin, requireAuth: false });
    assert.equal(await statusOf(`${gw.origin}/capped/`), 200);
    let records = 1;

    // Most of the cap through the writer, as the data plane ships records (about 0.6 MB).
    const writer = gw.gateway.accessLogWriter;
    while (writer.totals.bytes < 0.6 * CAP) {
      const now = Date.now();
      const batch: AccessLogEntry[] = Array.from({ length: 100 }, (_, i) => ({
        eventId: randomUUID(),
        serviceId,
        userId: null,
        path: `/capped/${PAD}/stored-${records + i}`,
        method: 'GET',
        statusCode: 200,
        responseTimeMs: 1,
        ipAddress: addressOf(10_000_000 + records + i),
        timestamp: now,
      }));
      await writer.store(batchOf(batch));
      records += batch.length;
      assert.equal(writer.totals.discarded, 0, 'not full before 0.6 MB');
    }

    // The rest through the proxy, until full, then more while full.
    const started = Date.now();
    const { statuses, atFull, sent } = await fillThroughProxy([gw.origin], gw.adminUrl);
    t.diagnostic(`${records} records stored directly, then ${sent} requests proxied in ${Date.now() - started} ms; full at ${JSON.stringify(atFull)}`);
    t.diagnostic(await checkCapped({ adminUrl: gw.adminUrl, databasePath: gw.databasePath, admin, serviceId, records: records + sent, atFull, statuses, log: () => log }));
    assert.equal(await statusOf(`${gw.origin}/capped/after`), 200, 'still proxying');
  });
});

describe('ACCESS_LOG_MAX_SIZE=1MB, split (admin process, two proxies, Redis)', () => {
  let upstream: EchoUpstream;
  let split: SplitGateway;

  before(async () => {
    upstream = await startEchoUpstream();
    // At info, so the admin process's output also says when the access log stores again.
    split = await startSplitGateway({ ...ENV, LOG_LEVEL: 'info' });
  });
  after(async () => {
    await split?.close();
    await upstream?.close();
  });

  it('fills to the cap through both proxies: proxying goes on, new records are discarded and counted, the admin process warns once, the API lists what was stored', async (t) => {
    const admin = await split.signIn();
    const serviceId = await split.createService(admin, { name: 'Capped', path: '/capped', targetUrl: upstream.origin, requireAuth: false });
    // Each 200 of this wait is a proxied request, hence a record, too.
    let probes = 0;
    await eventually('the route on both proxies', async () => {
      const statuses = await Promise.all(split.proxies.map((proxy) => statusOf(`${proxy.url}/capped/`)));
      probes += statuses.filter((status) => status === 200).length;
      return statuses.every((status) => status === 200);
    });

    const started = Date.now();
    const { statuses, atFull, sent } = await fillThroughProxy(split.proxies.map((proxy) => proxy.url), split.adminUrl);
    t.diagnostic(`${sent} requests proxied in ${Date.now() - started} ms; full at ${JSON.stringify(atFull)}`);
    t.diagnostic(await checkCapped({
      adminUrl: split.adminUrl,
      databasePath: split.databasePath,
      admin,
      serviceId,
      records: probes + sent,
      atFull,
      statuses,
      log: () => split.admin.output(),
    }));
    const proxied = await Promise.all(split.proxies.map((proxy) => statusOf(`${proxy.url}/capped/after`)));
    assert.deepEqual(proxied, [200, 200], 'still proxying');
  });
});
