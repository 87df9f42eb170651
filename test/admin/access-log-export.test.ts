/**
 * The access-log export (ACCESS_LOG_EXPORT=otlp, README "Access log export") end to end, in the
 * embedded gateway and in split mode (real admin and proxy processes over a real Redis): records
 * of real proxied requests reach a real OTLP/HTTP receiver (test/support/otlp-receiver.ts) with the
 * README's attributes and the configured headers; a receiver that is down (its port refusing) and
 * comes back on the same port gets every record (at least once) while SQLite holds each exactly
 * once and proxying never waits; `/metrics` counts what arrived; and (split) an admin process
 * stopped while the export holds records exits within its bound, saying how many it dropped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { AccessLogReader } from '../../admin/access-log/reading/access-log-reader.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { startTestGateway } from '../support/gateway.js';
import { OtlpReceiver, type ReceivedLogRecord } from '../support/otlp-receiver.js';
import { signIn } from '../support/sessions.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

/** Records proxied while the receiver is down (half before the export noticed, half after). */
const OUTAGE_REQUESTS = 200;
/** Records proxied before the admin process is stopped with the receiver down (split mode). */
const STOP_REQUESTS = 50;
/** A proxied request "answers promptly" within this (they take a few ms; a stalled export would hold them for seconds). */
const PROMPT_MS = 1_000;
/** What the admin process may take to stop (shared/graceful-stop.ts STOP_DEADLINE_MS, README "Stopping"). */
const STOP_DEADLINE_MS = 18_000;
/** How long the export keeps trying at stop (README "Access log export": 5 s). */
const EXPORT_CLOSE_MS = 5_000;
/** The secret part of the configured header: it must reach the receiver and never a log line. */
const SECRET = 'otlp-s3cret';
const SERVICE_NAME = 'Echo Export';

/** The export's settings, as an operator writes them. */
const exportEnv = (receiver: OtlpReceiver): Record<string, string> => ({
  ACCESS_LOG_EXPORT: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET},x-tenant=acme%20corp`,
});

/** A pino line as the gateway logs it: level number (30 info, 40 warn), message, fields. */
type LogLine = { level: number; msg: string } & Record<string, unknown>;

/** The JSON lines of a log text (anything else, such as a stack trace line, skipped). */
function logLinesOf(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a partial line still being written
    }
  }
  return lines;
}

/** What the scenarios need of a running gateway, embedded or split. */
interface Deployment {
  /** Where requests are proxied (a public port). */
  publicUrl: string;
  /** The base URL of `GET /api/services/:id/logs` and the session that may call it. */
  apiUrl: string;
  admin: { cookie: string; csrfToken: string };
  /** The admin port's `/metrics`. */
  metricsUrl: string;
  databasePath: string;
  serviceId: string;
  /** The service's target url: the one that answers every proxied request. */
  targetUrl: string;
  /** Every line logged so far by the process holding the admin plane (warn and up in split mode). */
  logs(): LogLine[];
  /** All it logged, as text (to check that no secret is in it). */
  logText(): string;
}

/** One proxied request's answer and how long it took. */
interface Timed {
  path: string;
  status: number;
  ms: number;
}

/** GETs `paths` through `publicUrl`, `concurrency` at a time; each answer's status and time. */
async function proxyAll(publicUrl: string, paths: readonly string[], concurrency = 20): Promise<Timed[]> {
  const results: Timed[] = [];
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const started = performance.now();
      const status = await statusOf(`${publicUrl}${path}`);
      results.push({ path, status, ms: performance.now() - started });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** `GET /api/services/:id/logs` with `query`: `{ logs, total }`. */
async function logsPage(d: Deployment, query: string): Promise<{ logs: Array<{ id: number; path: string; method: string; status_code: number; user_id: string | null; ip_address: string }>; total: number }> {
  const response = await apiClient(d.apiUrl)('GET', `/api/services/${d.serviceId}/logs?${query}`, { as: d.admin });
  assert.equal(response.status, 200, response.text);
  return response.json;
}

/** The records of the service whose path holds `fragment`, read from the day files themselves. */
function storedRecords(d: Deployment, fragment: string) {
  const reader = new AccessLogReader(accessLogDirOf(d.databasePath));
  try {
    return reader.listForService(d.serviceId, 1_000, 0, { pathContains: fragment });
  } finally {
    reader.close();
  }
}

/** A counter's value in a /metrics text (undefined when absent). */
function metric(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

const metricsText = async (d: Deployment) => (await request(d.metricsUrl)).body.text();

/** The last failure the gateway logged (a warning or error with an `err`), if any, for a failure message. */
function errorsOf(d: Deployment): string {
  const error = d.logs().filter((line) => line.level >= 40 && line.err !== undefined).at(-1);
  return error === undefined ? '' : ` (the gateway logged: ${error.msg}: ${JSON.stringify(error.err ?? '').slice(0, 300)})`;
}

const warnings = (d: Deployment, pattern: RegExp) => d.logs().filter((line) => line.level === 40 && pattern.test(line.msg));
const UNREACHABLE = /OTLP collector unreachable/;

/** Each attribute the README lists, for an anonymous GET answered 200 by the echo upstream with `requestId` as its X-Request-Id. */
function assertRecordOf(record: ReceivedLogRecord | undefined, d: Deployment, method: string, path: string, query: string | undefined, requestId: string): void {
  assert.ok(record, `a record of ${method} ${path}`);
  const { 'gatehouse.response_time_ms': responseTime, 'log.record.uid': uid, ...attributes } = record.attributes;
  assert.deepEqual(attributes, {
    'http.request.method': method,
    'url.path': path,
    ...(query === undefined ? {} : { 'url.query': query }),
    'http.response.status_code': 200,
    'client.address': '127.0.0.1',
    'network.protocol.version': '1.1',
    'gatehouse.service.id': d.serviceId,
    'gatehouse.service.name': SERVICE_NAME,
    'gatehouse.target': d.targetUrl,
    'gatehouse.count': 1,
    'gatehouse.request_id': requestId,
  });
  assert.equal('user.id' in record.attributes, false, 'anonymous: no user.id');
  assert.deepEqual([record.traceId, record.spanId], [undefined, undefined], 'not traced: tracing is off');
  assert.equal(typeof responseTime, 'number');
  assert.match(String(uid), /\S/);
  assert.equal(record.body, `${method} ${path}${query === undefined ? '' : `?${query}`} 200`);
  assert.deepEqual([record.severityNumber, record.severityText], [9, 'INFO']);
  assert.deepEqual(record.resource, { 'service.name': 'gatehouse' });
}

/** Scenario 1: the records of real requests arrive, one each, with their attributes, and the configured headers. */
async function recordsArriveWithAttributes(d: Deployment, receiver: OtlpReceiver): Promise<void> {
  const started = receiver.requests.length;
  const answers = await Promise.all([
    request(`${d.publicUrl}/echo/items?id=7&q=a`),
    request(`${d.publicUrl}/echo/orders`, { method: 'POST', body: 'x=1' }),
  ]);
  for (const answer of answers) {
    assert.equal(answer.statusCode, 200);
    await answer.body.dump();
  }
  // Stored first (the export is offered a batch once it is stored): a writer that cannot store says why in its log.
  await eventually('the two records stored', async () => (await logsPage(d, 'path=/echo/&limit=1')).total >= 2).catch((error: Error) => {
    throw new Error(`${error.message}${errorsOf(d)}`);
  });
  await receiver.until('the two records', (r) => r.withPathPrefix('/echo/items').length === 1 && r.withPathPrefix('/echo/orders').length === 1);

  const [items, orders] = answers.map((answer) => String(answer.headers['x-request-id']));
  assertRecordOf(receiver.withPathPrefix('/echo/items')[0], d, 'GET', '/echo/items', 'id=7&q=a', items!);
  assertRecordOf(receiver.withPathPrefix('/echo/orders')[0], d, 'POST', '/echo/orders', undefined, orders!);
  const ours = receiver.received.filter((r) => /^\/echo\/(items|orders)$/.test(String(r.attributes['url.path'])));
  assert.equal(ours.length, 2, 'one log record per request');
  assert.equal(new Set(ours.map((r) => r.uid)).size, 2);

  const posts = receiver.requests.slice(started);
  assert.ok(posts.length >= 1);
  for (const post of posts) {
    assert.equal(post.headers.authorization, `Bearer ${SECRET}`);
    assert.equal(post.headers['x-tenant'], 'acme corp');
    assert.equal(post.headers['content-type'], 'application/json');
  }

  const stored = await logsPage(d, 'path=/echo/items');
  assert.equal(stored.total, 1);
  assert.equal(stored.logs[0]!.path, '/echo/items?id=7&q=a');
  assert.doesNotMatch(d.logText(), new RegExp(SECRET), 'the header value is never logged');
}

/**
 * Scenario 2 (and 4): the receiver is down while requests are proxied, then comes back on the same
 * port: every record arrives, SQLite holds each once, nothing waited for the export, and
 * `/metrics` counts what arrived.
 */
async function outageLosesNothing(t: TestContext, d: Deployment, receiver: OtlpReceiver): Promise<void> {
  const warnedBefore = warnings(d, UNREACHABLE).length;
  await receiver.stop(); // its port now refuses connections
  const paths = Array.from({ length: OUTAGE_REQUESTS }, (_, i) => `/echo/outage-${i}`);
  const half = OUTAGE_REQUESTS / 2;

  const first = await proxyAll(d.publicUrl, paths.slice(0, half));
  // The export tries about a second after the first records are stored, fails, and says so once.
  await eventually('the export to notice the receiver is down', () => warnings(d, UNREACHABLE).length > warnedBefore, 10_000);
  const second = await proxyAll(d.publicUrl, paths.slice(half)); // while it retries
  for (const answer of [...first, ...second]) {
    assert.equal(answer.status, 200, answer.path);
    assert.ok(answer.ms < PROMPT_MS, `${answer.path} took ${Math.round(answer.ms)} ms with the receiver down`);
  }

  // Stored, and readable, while the receiver is still down: storing does not wait for the export.
  await eventually('every record readable in the API while the receiver is down', async () => (await logsPage(d, 'path=/echo/outage-&limit=1')).total === OUTAGE_REQUESTS);
  assert.equal(receiver.up, false);
  assert.equal(receiver.withPathPrefix('/echo/outage-').length, 0);
  const warning = warnings(d, UNREACHABLE).at(-1)!;
  assert.match(String(warning.reason), /ECONNREFUSED|refused|closed/i);
  assert.equal(warning.collector, `${receiver.endpoint}/v1/logs`);

  // Back on the same port: the batch being retried, and what waited behind it, are sent.
  const back = Date.now();
  await receiver.resume();
  await receiver.until(`all ${OUTAGE_REQUESTS} records after the receiver came back`, (r) => r.withPathPrefix('/echo/outage-').length === OUTAGE_REQUESTS, 30_000);
  const caughtUpMs = Date.now() - back;
  const arrived = receiver.withPathPrefix('/echo/outage-');
  assert.deepEqual(new Set(arrived.map((r) => r.attributes['url.path'])), new Set(paths), 'nothing lost');
  const copies = receiver.received.filter((r) => String(r.attributes['url.path']).startsWith('/echo/outage-')).length;
  assert.ok(copies >= OUTAGE_REQUESTS, 'at least once');

  // SQLite holds each request exactly once: through the API and in the day files themselves.
  const page = await logsPage(d, 'path=/echo/outage-&limit=1000');
  assert.equal(page.total, OUTAGE_REQUESTS);
  assert.equal(page.logs.length, OUTAGE_REQUESTS);
  assert.deepEqual(new Set(page.logs.map((log) => log.path)), new Set(paths));
  assert.equal(new Set(page.logs.map((log) => log.id)).size, OUTAGE_REQUESTS, 'no duplicate ids');
  const stored = storedRecords(d, '/echo/outage-');
  assert.equal(stored.total, OUTAGE_REQUESTS);
  assert.deepEqual(new Set(stored.logs.map((log) => log.path)), new Set(paths));
  assert.equal(new Set(stored.logs.map((log) => log.id)).size, OUTAGE_REQUESTS);

  // /metrics: the writer's counters are read as of its last stored batch (access-log-writer.ts), so
  // after a quiet catch-up they still show the count from before the outage; one more request brings
  // them up to date. Its own record is offered after the counters are read (and sent a second later).
  const tick = '/echo/metrics-tick';
  assert.equal(await statusOf(`${d.publicUrl}${tick}`), 200);
  await eventually('the tick stored', async () => (await logsPage(d, 'path=/echo/metrics-tick&limit=1')).total === 1);
  let text = '';
  await eventually('gatehouse_access_log_exported_total to count what arrived', async () => {
    text = await metricsText(d);
    const arrivedBeforeTick = receiver.received.filter((r) => r.attributes['url.path'] !== tick).length;
    return metric(text, 'gatehouse_access_log_exported_total') === arrivedBeforeTick;
  }, 5_000);
  assert.equal(metric(text, 'gatehouse_access_log_export_dropped_total'), 0);
  // Leave the export idle: the next scenario counts what it holds.
  await receiver.until('the tick record', (r) => r.withPathPrefix(tick).length === 1);
  assert.equal(warnings(d, UNREACHABLE).length, warnedBefore + 1, 'the outage is warned about once, not per retry');
  assert.doesNotMatch(d.logText(), new RegExp(SECRET));
  // How long the return took to be noticed: the backoff in force then (0.5 s, doubling, jittered).
  t.diagnostic(`all records arrived ${caughtUpMs} ms after the receiver came back`);
}

describe('embedded gateway', () => {
  let receiver: OtlpReceiver;
  let upstream: EchoUpstream;
  let closeGateway: (() => Promise<void>) | undefined;
  let d: Deployment;
  const logged: string[] = [];

  before(async () => {
    receiver = await OtlpReceiver.start();
    upstream = await startEchoUpstream();
    const gw = await startTestGateway({ LOG_LEVEL: 'info', ...exportEnv(receiver) }, { onLog: (line) => void logged.push(line) });
    closeGateway = () => gw.close();
    const admin = await signIn(gw);
    const created = await apiClient(gw.origin)('POST', '/api/services', { as: admin, json: { name: SERVICE_NAME, path: '/echo', targetUrl: upstream.origin, requireAuth: false } });
    assert.equal(created.status, 201, created.text);
    d = {
      publicUrl: gw.origin,
      apiUrl: gw.origin,
      admin,
      metricsUrl: `${gw.adminUrl}/metrics`,
      databasePath: gw.databasePath,
      serviceId: created.json.id as string,
      targetUrl: upstream.origin,
      logs: () => logLinesOf(logged.join('')),
      logText: () => logged.join(''),
    };
  });
  after(async () => {
    await closeGateway?.();
    await receiver?.close();
    await upstream?.close();
  });

  it('sends the record of each proxied request to the receiver with the README attributes and OTEL_EXPORTER_OTLP_HEADERS', async () => {
    await recordsArriveWithAttributes(d, receiver);
  });

  it('a receiver down while requests are proxied and back on the same port: every record arrives, SQLite holds each once, /metrics counts them', async (t) => {
    await outageLosesNothing(t, d, receiver);
  });
});

describe('split mode (admin and proxy processes over Redis)', () => {
  let receiver: OtlpReceiver;
  let upstream: EchoUpstream;
  let split: SplitGateway;
  let d: Deployment;

  before(async () => {
    receiver = await OtlpReceiver.start();
    upstream = await startEchoUpstream();
    split = await startSplitGateway(exportEnv(receiver));
    const admin = await split.signIn();
    const serviceId = await split.createService(admin, { name: SERVICE_NAME, path: '/echo', targetUrl: upstream.origin, requireAuth: false });
    const publicUrl = split.proxies[0].url;
    await eventually('the route on the proxy', async () => (await statusOf(`${publicUrl}/echo/ready`)) === 200);
    d = {
      publicUrl,
      apiUrl: split.adminUrl,
      admin,
      metricsUrl: `${split.adminUrl}/metrics`,
      databasePath: split.databasePath,
      serviceId,
      targetUrl: upstream.origin,
      logs: () => logLinesOf(split.admin.output()),
      logText: () => split.admin.output(),
    };
  });
  after(async () => {
    await split?.close();
    await receiver?.close();
    await upstream?.close();
  });

  it('sends the record of each request a proxy process served to the receiver with the README attributes and OTEL_EXPORTER_OTLP_HEADERS', async () => {
    await recordsArriveWithAttributes(d, receiver);
  });

  it('a receiver down while requests are proxied and back on the same port: every record arrives, SQLite holds each once, /metrics counts them', async (t) => {
    await outageLosesNothing(t, d, receiver);
  });

  it('SIGTERM to the admin process while the receiver is down and the export holds records: exits 0 within its bound, warns how many it dropped; SQLite keeps them', async () => {
    const unreachableBefore = warnings(d, UNREACHABLE).length;
    await receiver.stop();
    const paths = Array.from({ length: STOP_REQUESTS }, (_, i) => `/echo/stop-${i}`);
    const answers = await proxyAll(d.publicUrl, paths);
    assert.ok(answers.every((answer) => answer.status === 200));
    await eventually('the records stored', async () => (await logsPage(d, 'path=/echo/stop-&limit=1')).total === STOP_REQUESTS);
    // The export has tried them and holds them (nothing else: the previous test left it idle).
    await eventually('the export to notice the receiver is down', () => warnings(d, UNREACHABLE).length > unreachableBefore, 10_000);

    const signalled = Date.now();
    const code = await split.admin.stop('SIGTERM');
    const tookMs = Date.now() - signalled;
    assert.equal(code, 0, split.admin.output());
    assert.ok(tookMs < STOP_DEADLINE_MS, `stopped in ${tookMs} ms`);
    assert.ok(tookMs >= EXPORT_CLOSE_MS - 100, `stopped in ${tookMs} ms: the export should have kept trying for ${EXPORT_CLOSE_MS} ms`);
    const closed = warnings(d, /access-log export closed before the OTLP collector took every record/);
    assert.equal(closed.length, 1, split.admin.output());
    assert.equal(closed[0]!.dropped, STOP_REQUESTS, 'the warning says how many export records were dropped');
    assert.equal(closed[0]!.timeoutMs, EXPORT_CLOSE_MS);
    assert.equal(warnings(d, /stop did not finish in time/).length, 0);
    assert.doesNotMatch(split.admin.output(), new RegExp(SECRET));

    // Dropped from the export only: the day files hold each record once.
    const stored = storedRecords(d, '/echo/stop-');
    assert.equal(stored.total, STOP_REQUESTS);
    assert.deepEqual(new Set(stored.logs.map((log) => log.path)), new Set(paths));
    assert.equal(new Set(stored.logs.map((log) => log.id)).size, STOP_REQUESTS);
    assert.equal(receiver.withPathPrefix('/echo/stop-').length, 0);
  });
});
