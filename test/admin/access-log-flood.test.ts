/**
 * A flood cannot erase the access log's history (README "Where access-log records go", design.md
 * §4.11), tried as the attack, embedded and split: a gateway whose access log may take 2 MB
 * (ACCESS_LOG_MAX_SIZE; a day's budget is then 2 MB ÷ 30 days, and one client address's share
 * 10 % of that, about 7 kB) holds three earlier days of records when one client sends 1,200
 * requests with unique 1.9 kB paths, more than the whole cap if each were stored.
 *
 * - From one address: past its share, its records are summarised (one per service, minute and
 *   status class, carrying `count`); the earlier days, the audit log and the cap hold, every
 *   request is still counted in the API's records, the operator is warned once and /metrics says so.
 * - From many addresses (each under its share, so nothing is summarised): the cap is kept by
 *   deleting the oldest day, and that deletion is warned about with its record count, counted in
 *   /metrics by reason and written to the audit log as the gateway's act.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { dayName, dayOf, DAY_MS } from '../../admin/access-log/day-files.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { RedisAccessLogSink } from '../../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { apiClient, createService, type ApiCall } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { startTestGateway } from '../support/gateway.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { startSplitGateway } from '../support/split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const CAP = 2_000_000;
/**
 * The gateways' settings: the cap, the test client as a trusted proxy (a request that sends
 * X-Forwarded-For names its own client address; one that does not is 127.0.0.1), and info logs.
 */
const ENV = { ACCESS_LOG_MAX_SIZE: '2MB', TRUST_PROXY: 'loopback', LOG_LEVEL: 'info' };
/** How far above the cap the day files may be seen: today's write-ahead log (access-log-disk-cap.test.ts says why). */
const WAL_MARGIN = 128 * 1024;
const PREFIX = '/flood';
/** Requests of the flood from one address. */
const FLOOD = 1_200;
/** Padding that makes each path 1.9 kB: under the proxy's 2,048-byte cut, so each is stored whole. */
const PAD = 'A'.repeat(1_900);
/** Records on each of the three days before today, from addresses of their own. */
const EARLIER_PER_DAY = 40;
const EARLIER_DAYS = [3, 2, 1];
/** Requests in flight at once. */
const CONCURRENCY = 24;
/** Longest the many-address flood may take to make the cap delete a day. */
const DELETE_DEADLINE_MS = 30_000;

/** One gateway under attack, embedded or split. */
interface Deployment {
  adminUrl: string;
  /** The public origins of its data plane (one embedded, the two proxies split). */
  origins: string[];
  admin: SignedIn;
  serviceId: string;
  /** Hands records to the admin's writer as the data plane ships them (embedded: its sink; split: the Redis stream). */
  ship(records: AccessLogEntry[]): Promise<void>;
  /** Everything the admin plane has logged so far (JSON lines). */
  log(): string;
  close(): Promise<void>;
}

/** A Prometheus sample's value, by name and exact label text (`{reason="max_size"}`); NaN when absent. */
function sample(text: string, name: string, labels = ''): number {
  const escaped = `${name}${labels}`.replace(/[{}"]/g, (c) => `\\${c}`);
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

async function metricsOf(adminUrl: string): Promise<string> {
  const response = await request(`${adminUrl}/metrics`);
  assert.equal(response.statusCode, 200);
  return response.body.text();
}

/** Sends GETs to `path(i)` for i in [first, first + count), `headers(i)` with each, at most {@link CONCURRENCY} at once; resolves with their statuses. */
async function drive(origins: string[], first: number, count: number, path: (i: number) => string, headers: (i: number) => Record<string, string> = () => ({})): Promise<number[]> {
  const statuses: number[] = [];
  let next = first;
  const worker = async () => {
    for (let i = next++; i < first + count; i = next++) {
      const response = await request(`${origins[i % origins.length]}${path(i)}`, { headers: headers(i) });
      await response.body.dump();
      statuses.push(response.statusCode);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

/** The log lines whose message contains `text`, parsed. */
const linesAbout = (log: string, text: string): Record<string, unknown>[] =>
  log.split('\n').filter((line) => line.includes(text)).map((line) => JSON.parse(line) as Record<string, unknown>);

/** The records of the earlier days: {@link EARLIER_PER_DAY} a day, each from an address of its own. */
function earlierRecords(serviceId: string): AccessLogEntry[] {
  const now = Date.now();
  return EARLIER_DAYS.flatMap((daysAgo) =>
    Array.from({ length: EARLIER_PER_DAY }, (_, i) => ({
      eventId: randomUUID(),
      serviceId,
      userId: null,
      path: `${PREFIX}/earlier/${daysAgo}/${i}`,
      method: 'GET',
      statusCode: 200,
      responseTimeMs: 1,
      ipAddress: `192.0.2.${i + 1}`,
      timestamp: (dayOf(now) - daysAgo) * DAY_MS + 3_600_000 + i * 1000,
    })),
  );
}

/** Waits until the admin's writer has taken `records` records (stored, summarised, discarded or expired); resolves with its /metrics. */
async function settled(adminUrl: string, records: number): Promise<string> {
  let text = '';
  const taken = ['stored', 'summarised', 'discarded', 'expired'].map((what) => `gatehouse_access_log_records_${what}_total`);
  await eventually(`the writer to take ${records} records`, async () => {
    text = await metricsOf(adminUrl);
    return taken.reduce((sum, name) => sum + sample(text, name), 0) >= records;
  }, 20_000);
  return text;
}

/** The flood and the deletion, on the deployment `start` makes. */
function floodScenarios(start: (upstream: EchoUpstream) => Promise<Deployment>): void {
  let upstream: EchoUpstream;
  let d: Deployment;
  let call: ApiCall;
  /** Records handed to the writer so far: the earlier days', the probes', the flood's. */
  let handed = 0;

  before(async () => {
    upstream = await startEchoUpstream();
    d = await start(upstream);
    call = apiClient(d.adminUrl);
    await d.ship(earlierRecords(d.serviceId));
    handed += EARLIER_DAYS.length * EARLIER_PER_DAY;
    await eventually('the route on every origin of the data plane', async () => {
      const statuses = await Promise.all(d.origins.map((origin) => statusOf(`${origin}${PREFIX}/`)));
      handed += statuses.filter((status) => status === 200).length; // each is a record too
      return statuses.every((status) => status === 200);
    });
    await settled(d.adminUrl, handed);
  });
  after(async () => {
    await d?.close();
    await upstream?.close();
  });

  /** How many records of the service the API lists between `from` and `to` (ms). */
  const totalBetween = async (from: number, to: number): Promise<number> => {
    const page = await call('GET', `/api/services/${d.serviceId}/logs?limit=1&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`, { as: d.admin });
    assert.equal(page.status, 200, page.text);
    return page.json.total as number;
  };
  const auditActions = async (): Promise<{ action: string; user_id: string | null; ip_address: string | null; details: string }[]> => {
    const page = await call('GET', '/dashboard/logs?limit=100', { as: d.admin });
    assert.equal(page.status, 200, page.text);
    return page.json.logs;
  };
  const earlierTotals = () => Promise.all(EARLIER_DAYS.map((daysAgo) => {
    const start = (dayOf(Date.now()) - daysAgo) * DAY_MS;
    return totalBetween(start, start + DAY_MS);
  }));

  it('one address flooding with long unique paths: its records past its share are summarised with counts; earlier days, the audit log and the cap hold', async (t) => {
    assert.deepEqual(await earlierTotals(), EARLIER_DAYS.map(() => EARLIER_PER_DAY), 'the earlier days, before');
    const auditBefore = await auditActions();
    const floodStart = Date.now();
    const statuses = await drive(d.origins, 0, FLOOD, (i) => `${PREFIX}/${i}/${PAD}`);
    assert.deepEqual(new Set(statuses), new Set([200]), 'the flood is proxied');
    handed += FLOOD;
    const metrics = await settled(d.adminUrl, handed);

    assert.deepEqual(await earlierTotals(), EARLIER_DAYS.map(() => EARLIER_PER_DAY), 'the earlier days are all there');
    assert.deepEqual(await auditActions(), auditBefore, 'the audit log is as it was: no day deleted');
    assert.equal(sample(metrics, 'gatehouse_access_log_days_deleted_total', '{reason="max_size"}'), 0);
    assert.equal(sample(metrics, 'gatehouse_access_log_days_deleted_total', '{reason="disk_reserve"}'), 0);
    assert.equal(sample(metrics, 'gatehouse_access_log_records_discarded_total'), 0, 'nothing discarded: the log is far from full');
    assert.ok(sample(metrics, 'gatehouse_access_log_disk_bytes') <= CAP / 2, `the day files take ${sample(metrics, 'gatehouse_access_log_disk_bytes')} bytes`);
    assert.equal(sample(metrics, 'gatehouse_access_log_addresses_over_share_total'), 1);
    assert.ok(sample(metrics, 'gatehouse_access_log_records_summarised_total') >= FLOOD - 100, metrics);

    const page = await call('GET', `/api/services/${d.serviceId}/logs?limit=1000&from=${new Date(floodStart).toISOString()}`, { as: d.admin });
    assert.equal(page.status, 200, page.text);
    const logs = page.json.logs as { ip_address: string; count: number; path: string; path_truncated: boolean }[];
    const flood = logs.filter((log) => log.ip_address === '127.0.0.1' && log.path !== `${PREFIX}/`); // not a probe of the route
    assert.equal(flood.reduce((sum, log) => sum + log.count, 0), FLOOD, 'every request of the flood is counted in the records');
    assert.ok(flood.length < 50, `${FLOOD} requests in ${flood.length} records`);
    t.diagnostic(`${FLOOD} requests in ${flood.length} records (counts ${flood.map((log) => log.count).join(', ')}), ${sample(metrics, 'gatehouse_access_log_disk_bytes')} bytes on disk`);
    assert.ok(flood.some((log) => log.count > 10), 'summary records carry their count');
    assert.ok(flood.every((log) => log.path.startsWith(`${PREFIX}/`) && !log.path_truncated));
    assert.equal(page.json.total, page.json.logs.length, 'the total counts records, a summary once');

    const warnings = linesAbout(d.log(), "filled its share of the day's budget");
    assert.equal(warnings.length, 1, 'warned once for the address');
    assert.deepEqual({ level: warnings[0]!.level, address: warnings[0]!.address }, { level: 40, address: '127.0.0.1' });
  });

  it('many addresses filling the cap: the oldest day is deleted, warned about with its record count, counted in /metrics and audited as the gateway', async (t) => {
    const started = Date.now();
    let sent = 0;
    let metrics = await metricsOf(d.adminUrl);
    while (!(sample(metrics, 'gatehouse_access_log_days_deleted_total', '{reason="max_size"}') >= 1)) {
      assert.ok(Date.now() - started < DELETE_DEADLINE_MS, `no day deleted after ${sent} requests:\n${metrics}`);
      const statuses = await drive(d.origins, FLOOD + sent, 200, (i) => `${PREFIX}/many/${i}/${PAD}`, (i) => ({ 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }));
      assert.deepEqual(new Set(statuses), new Set([200]));
      sent += 200;
      metrics = await metricsOf(d.adminUrl);
    }
    handed += sent;
    metrics = await settled(d.adminUrl, handed); // what was still on its way deletes no more after this
    t.diagnostic(`${sent} requests from as many addresses; ${sample(metrics, 'gatehouse_access_log_days_deleted_total', '{reason="max_size"}')} day(s) deleted`);
    const oldest = dayName(dayOf(Date.now()) - EARLIER_DAYS[0]!);
    const deletion = { day: oldest, reason: 'max_size', records: EARLIER_PER_DAY };

    const warned = linesAbout(d.log(), 'deleted a day of raw records');
    assert.ok(warned.length >= 1);
    assert.deepEqual({ level: warned[0]!.level, day: warned[0]!.day, reason: warned[0]!.reason, records: warned[0]!.records }, { level: 40, ...deletion });

    const audited = (await auditActions()).filter((entry) => entry.action === 'ACCESS_LOG_DAY_DELETED');
    assert.ok(audited.length >= 1, 'the deletion is in the audit log');
    const first = audited.at(-1)!;
    assert.deepEqual({ user_id: first.user_id, ip_address: first.ip_address, details: JSON.parse(first.details) }, { user_id: null, ip_address: null, details: deletion });
    assert.equal(audited.length, sample(metrics, 'gatehouse_access_log_days_deleted_total', '{reason="max_size"}'), 'one audit entry per day deleted');
    assert.ok(sample(metrics, 'gatehouse_access_log_disk_bytes') <= CAP + WAL_MARGIN, `the day files take ${sample(metrics, 'gatehouse_access_log_disk_bytes')} bytes`);
  });
}

describe('a flood of the access log, embedded', () => {
  floodScenarios(async (upstream) => {
    let log = '';
    const gw = await startTestGateway(ENV, { onLog: (line) => void (log += line) });
    try {
      const admin = await signIn(gw);
      const serviceId = await createService(gw.adminUrl, admin, { name: 'Flooded', path: PREFIX, targetUrl: upstream.origin, requireAuth: false });
      return {
        adminUrl: gw.adminUrl,
        origins: [gw.origin],
        admin,
        serviceId,
        ship: (records) => gw.gateway.accessLogWriter.store(batchOf(records)),
        log: () => log,
        close: () => gw.close(),
      };
    } catch (error) {
      await gw.close();
      throw error;
    }
  });
});

describe('a flood of the access log, split (admin process, two proxies, Redis)', () => {
  floodScenarios(async (upstream) => {
    const split = await startSplitGateway(ENV);
    const connections = new RedisConnections(split.redis.url);
    try {
      const admin = await split.signIn();
      const serviceId = await split.createService(admin, { name: 'Flooded', path: PREFIX, targetUrl: upstream.origin, requireAuth: false });
      return {
        adminUrl: split.adminUrl,
        origins: split.proxies.map((proxy) => proxy.url),
        admin,
        serviceId,
        async ship(records) {
          // As a proxy ships them: onto the access log's Redis stream, which the admin process reads.
          const sink = new RedisAccessLogSink(connections);
          for (const record of records) sink.write(record);
          await sink.close();
        },
        log: () => split.admin.output(),
        async close() {
          await connections.close();
          await split.close();
        },
      };
    } catch (error) {
      await connections.close();
      await split.close();
      throw error;
    }
  });
});
