/**
 * The access-log export over OTLP/HTTP (JSON), against a real receiver (test/support/otlp-receiver.ts:
 * a node:http server that decodes each POST as OTLP/JSON and keeps the log records of the requests it
 * answered 2xx). The collector can be down (port closed, or connections reset by a TCP server here),
 * answer 503, 400 or a partial success (scripted receiver answers), or never answer (a server here);
 * a flood of long paths meanwhile keeps the buffer within its bound in bytes. Also the
 * OTEL_EXPORTER_OTLP_* readers and ACCESS_LOG_OTLP_BUFFER_SIZE the exporter is configured with.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterEach, describe, it, test } from 'node:test';
import { OtlpLogExporter, type OtlpLogExporterOptions } from '../../admin/access-log/otlp/otlp-export.js';
import { eventId } from '../../shared/event-id.js';
import { ConfigError, loadConfig } from '../../shared/config/config.js';
import { otlpLogsUrl, parseOtlpHeaders } from '../../shared/config/otlp-headers.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { closeServer, listen } from '../support/listen.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { Recorder } from '../support/recorder.js';

interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/** What each test leaves to stop: its exporters first, then its servers. */
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SERVICE_NAMES = new Map([['svc-1', 'Echo']]);

/** An exporter to the receiver on `port`, with test-sized waits, and the lines it logs. */
function exporterTo(port: number, options: Partial<OtlpLogExporterOptions> = {}) {
  const logs = new Recorder<LogLine>();
  const exporter = new OtlpLogExporter({
    url: new URL(`http://127.0.0.1:${port}/v1/logs`),
    headers: {},
    serviceName: (id) => SERVICE_NAMES.get(id),
    log: (level, fields, message) => logs.listener({ level, fields, message }),
    intervalMs: 10,
    minBackoffMs: 5,
    maxBackoffMs: 40,
    ...options,
  });
  cleanups.push(() => exporter.close(100));
  const lines = (level: LogLine['level'], pattern: RegExp) => logs.values.filter((line) => line.level === level && pattern.test(line.message));
  return { exporter, logs, lines };
}

function entry(fields: Partial<AccessLogEntry> = {}): AccessLogEntry {
  const timestamp = fields.timestamp ?? Date.now();
  return {
    eventId: eventId(timestamp),
    serviceId: 'svc-1',
    userId: null,
    path: '/echo/x',
    method: 'GET',
    statusCode: 200,
    responseTimeMs: 3,
    ipAddress: '198.51.100.7',
    timestamp,
    ...fields,
  };
}

const records = (count: number) => Array.from({ length: count }, () => entry());
const uids = (entries: AccessLogEntry[]) => new Set(entries.map((e) => e.eventId));

/** An OTLP receiver on `port` of 127.0.0.1 (0: a free one), closed after the test. */
async function startReceiver(port = 0): Promise<OtlpReceiver> {
  const receiver = await OtlpReceiver.start(port);
  cleanups.push(() => receiver.close());
  return receiver;
}

/** A port nothing listens on (a receiver started and stopped), so connections to it are refused. */
async function closedPort(): Promise<number> {
  const receiver = await OtlpReceiver.start();
  await receiver.stop();
  return receiver.port;
}

/** Closes a TCP server; again is harmless. */
const stopTcp = (server: TcpServer) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));

/** A TCP server on `port` that resets every connection, telling `attempts` each time. */
async function resettingServer(port: number, attempts: Recorder<number>): Promise<TcpServer> {
  let count = 0;
  const server = createTcpServer((socket) => {
    socket.resetAndDestroy();
    attempts.listener(++count);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  cleanups.push(() => stopTcp(server));
  return server;
}

test('records arrive as OTLP log records: HTTP attributes (the service host as server.address), the request id, time, severity, resource, and the configured headers', async () => {
  const receiver = await startReceiver();
  const { exporter, logs } = exporterTo(receiver.port, { headers: parseOtlpHeaders('authorization=Bearer%20s3cret,x-tenant=acme') });
  const at = 1_700_000_000_123;
  const signedIn = entry({ path: '/echo/items?id=7&q=a', userId: 'user-1', timestamp: at, responseTimeMs: 42, host: 'app.example.com', requestId: '9f86d081884c7d65' });
  const refused = entry({ path: '/other', method: 'POST', statusCode: 404, serviceId: 'svc-2', timestamp: at + 1 });
  const failed = entry({ statusCode: 503 });
  const webdav = entry({ method: 'PROPFIND', statusCode: 207 });
  exporter.offer([signedIn, refused, failed, webdav]);
  await receiver.until('4 records', (r) => r.records.size === 4);

  const first = receiver.records.get(signedIn.eventId)!;
  assert.deepEqual(first.attributes, {
    'http.request.method': 'GET',
    'url.path': '/echo/items',
    'url.query': 'id=7&q=a',
    'http.response.status_code': 200,
    'client.address': '198.51.100.7',
    'server.address': 'app.example.com',
    'network.protocol.version': '1.1',
    'user.id': 'user-1',
    'gatehouse.service.id': 'svc-1',
    'gatehouse.service.name': 'Echo',
    'gatehouse.response_time_ms': 42,
    'gatehouse.count': 1,
    'gatehouse.request_id': '9f86d081884c7d65',
    'log.record.uid': signedIn.eventId,
  });
  assert.deepEqual([first.traceId, first.spanId, first.flags], [undefined, undefined, undefined], 'an untraced request names no trace');
  assert.equal(first.timeUnixNano, '1700000000123000000');
  assert.equal(first.observedTimeUnixNano, '1700000000123000000');
  assert.deepEqual([first.severityNumber, first.severityText], [9, 'INFO']);
  assert.equal(first.body, 'GET /echo/items?id=7&q=a 200', 'a string body');
  assert.deepEqual(first.resource, { 'service.name': 'gatehouse' });
  assert.equal(first.scope, 'gatehouse.access-log');

  const second = receiver.records.get(refused.eventId)!;
  assert.deepEqual([second.severityNumber, second.severityText], [13, 'WARN']);
  assert.equal(second.timeUnixNano, '1700000000124000000');
  assert.equal('url.query' in second.attributes || 'user.id' in second.attributes, false, 'no query, anonymous');
  assert.equal('server.address' in second.attributes, false, 'routed by path alone');
  assert.equal('gatehouse.service.name' in second.attributes, false, 'svc-2 has no known name');
  assert.equal('gatehouse.request_id' in second.attributes, false, 'a record of a proxy older than request ids');
  const third = receiver.records.get(failed.eventId)!;
  assert.deepEqual([third.severityNumber, third.severityText], [17, 'ERROR']);
  const other = receiver.records.get(webdav.eventId)!.attributes;
  assert.deepEqual([other['http.request.method'], other['http.request.method_original']], ['_OTHER', 'PROPFIND']);
  assert.equal('gatehouse.path_truncated' in first.attributes, false, 'a whole path says nothing of truncation');

  assert.equal(receiver.requests.length, 1, 'one request for the four records');
  const { headers } = receiver.requests[0]!;
  assert.equal(headers.authorization, 'Bearer s3cret');
  assert.equal(headers['x-tenant'], 'acme');
  assert.equal(headers['content-type'], 'application/json');
  await exporter.close();
  assert.deepEqual([exporter.exported, exporter.dropped, exporter.buffered], [4, 0, 0]);
  assert.deepEqual(logs.values, [], 'nothing to say when all goes well');
});

test("a traced request's record carries its trace and server span as the log record's traceId and spanId (hex, sampled flag), so a collector links it to the trace", async () => {
  const receiver = await startReceiver();
  const { exporter } = exporterTo(receiver.port);
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const traced = entry({ requestId: traceId, traceId, spanId: '00f067aa0ba902b7' });
  const trusted = entry({ requestId: 'lb-01:Root=1-67891233' });
  exporter.offer([traced, trusted]);
  await receiver.until('2 records', (r) => r.records.size === 2);
  const linked = receiver.records.get(traced.eventId)!;
  assert.deepEqual([linked.traceId, linked.spanId, linked.flags], [traceId, '00f067aa0ba902b7', 1]);
  assert.equal(linked.attributes['gatehouse.request_id'], traceId, 'a traced request is known by its trace id');
  const other = receiver.records.get(trusted.eventId)!;
  assert.deepEqual([other.traceId, other.spanId, other.attributes['gatehouse.request_id']], [undefined, undefined, 'lb-01:Root=1-67891233']);
});

test('a collector down (refusing, then resetting) and back on the same port gets every record offered meanwhile; one warning, one info', async () => {
  const port = await closedPort();
  const { exporter, logs, lines } = exporterTo(port, { batchSize: 50 });
  const offered = records(130);
  exporter.offer(offered.slice(0, 40));
  const warning = await logs.next((line) => line.level === 'warn');
  assert.match(warning.message, /unreachable/);
  assert.match(String(warning.fields.reason), /ECONNREFUSED/);
  exporter.offer(offered.slice(40, 100));

  const attempts = new Recorder<number>();
  const resetting = await resettingServer(port, attempts);
  await attempts.next((count) => count >= 3);
  exporter.offer(offered.slice(100, 120));
  await stopTcp(resetting);

  const receiver = await startReceiver(port);
  exporter.offer(offered.slice(120));
  await receiver.until('every record offered', (r) => r.records.size === offered.length);
  assert.deepEqual(new Set(receiver.records.keys()), uids(offered), 'nothing lost');
  await logs.next((line) => line.level === 'info');
  assert.equal(lines('warn', /./).length, 1, 'one warning for the whole outage, not one per retry');
  assert.equal(lines('info', /reachable again/).length, 1);
  await exporter.close();
  assert.deepEqual([exporter.exported, exporter.dropped, exporter.buffered], [offered.length, 0, 0]);
});

describe('the collector answers', () => {
  it('503 with Retry-After, then 200: the batch is sent again after Retry-After (capped at maxBackoffMs) and delivered', async () => {
    const receiver = await startReceiver();
    receiver.answers.push({ status: 503, headers: { 'retry-after': '1' } });
    const { exporter } = exporterTo(receiver.port, { minBackoffMs: 1, maxBackoffMs: 300 });
    const offered = records(5);
    exporter.offer(offered);
    await receiver.until('5 records', (r) => r.records.size === 5);
    assert.deepEqual(receiver.requests.map((post) => post.status), [503, 200]);
    const [refused, retried] = receiver.requests.map((post) => post.at);
    // Without Retry-After the first retry waits minBackoffMs (1 ms); with it, 1 s capped at 300 ms.
    assert.ok(retried! - refused! >= 250, `retried after ${retried! - refused!} ms`);
    await exporter.close();
    assert.deepEqual([exporter.exported, exporter.dropped], [5, 0]);
  });

  it('400: the batch is dropped, counted and logged with its status (no header value), not retried; the next batch goes', async () => {
    const receiver = await startReceiver();
    receiver.answers.push({ status: 400, body: '{"code":3,"message":"bad timestamp"}' });
    const { exporter, logs } = exporterTo(receiver.port, { headers: { 'api-key': 's3cret' } });
    exporter.offer(records(5));
    const error = await logs.next((line) => line.level === 'error');
    assert.equal(error.fields.status, 400);
    assert.match(String(error.fields.answer), /bad timestamp/);
    assert.deepEqual([exporter.dropped, exporter.exported, exporter.buffered], [5, 0, 0]);

    const next = records(3);
    exporter.offer(next);
    await receiver.until('3 records', (r) => r.records.size === 3);
    assert.deepEqual(new Set(receiver.records.keys()), uids(next), 'the refused batch was not sent again');
    assert.equal(receiver.requests.length, 2);
    await exporter.close();
    assert.deepEqual([exporter.exported, exporter.dropped], [3, 5]);
    assert.doesNotMatch(JSON.stringify(logs.values), /s3cret/);
  });

  it('a partial success: the rejected records are counted as dropped, one warning per reason', async () => {
    const receiver = await startReceiver();
    const partial = { status: 200, body: JSON.stringify({ partialSuccess: { rejectedLogRecords: '2', errorMessage: 'timestamp too old' } }) };
    receiver.answers.push(partial, partial);
    const { exporter, logs, lines } = exporterTo(receiver.port);
    exporter.offer(records(5));
    const warning = await logs.next((line) => line.level === 'warn');
    assert.deepEqual([warning.fields.rejected, warning.fields.reason], [2, 'timestamp too old']);
    exporter.offer(records(5));
    await receiver.until('10 records', (r) => r.records.size === 10);
    exporter.offer(records(5));
    await exporter.close();
    assert.deepEqual([exporter.exported, exporter.dropped], [3 + 3 + 5, 2 + 2]);
    assert.equal(lines('warn', /rejected/).length, 1);
  });
});

test('a summary record carries its count, a cut path says so', async () => {
  const receiver = await startReceiver();
  const { exporter } = exporterTo(receiver.port);
  const summary = entry({ statusCode: 429, count: 7 });
  const cut = entry({ path: `/echo/${'a'.repeat(2_041)}…`, pathTruncated: true });
  exporter.offer([summary, cut]);
  await receiver.until('2 records', (r) => r.records.size === 2);
  const counted = receiver.records.get(summary.eventId)!.attributes;
  assert.deepEqual([counted['gatehouse.count'], counted['http.response.status_code']], [7, 429]);
  assert.equal('gatehouse.path_truncated' in counted, false);
  const truncated = receiver.records.get(cut.eventId)!.attributes;
  assert.deepEqual([truncated['gatehouse.count'], truncated['gatehouse.path_truncated']], [1, true]);
  assert.equal(String(truncated['url.path']).endsWith('…'), true);
});

test('the attack: long paths with the collector away fill the buffer to its byte bound, not past it; the oldest go, counted, one warning; the newest arrive', async () => {
  const maxBufferedBytes = 1_000_000;
  const port = await closedPort();
  const { exporter, logs, lines } = exporterTo(port, { maxBufferedBytes });
  // The first record becomes the batch being retried: the buffer keeps it, as it may be in flight.
  const first = entry();
  exporter.offer([first]);
  await logs.next((line) => /unreachable/.test(line.message));
  const flood = Array.from({ length: 300 }, (_, i) => entry({ path: `/echo/${i}-${'A'.repeat(15_000)}` }));
  for (let i = 0; i < flood.length; i += 10) {
    exporter.offer(flood.slice(i, i + 10));
    assert.ok(exporter.bufferedBytes <= maxBufferedBytes, `${exporter.bufferedBytes} bytes held after ${i + 10} records`);
  }
  // 300 records of about 31 KB each are 9 MB: all but about 32 of them must have gone.
  const held = exporter.buffered;
  assert.ok(held > 20 && held < 40, `${held} records held`);
  assert.equal(exporter.dropped, 1 + flood.length - held, 'every record not held is counted as dropped');
  assert.equal(lines('warn', /buffer full/).length, 1, 'one warning for the overflow, not one per record dropped');

  const receiver = await startReceiver(port);
  await receiver.until('the records held', (r) => r.records.size === held);
  assert.deepEqual(new Set(receiver.records.keys()), uids([first, ...flood.slice(flood.length - (held - 1))]), 'the newest records arrived, up to the last one offered');
  // A batch takes at most a quarter of the bound, so the one being retried leaves room for the newest.
  const perRequest = receiver.requests.map((post) => post.records);
  assert.ok(Math.max(...perRequest) <= Math.floor(maxBufferedBytes / 4 / 30_000), `records per request: ${perRequest.join(', ')}`);
  await logs.next((line) => line.level === 'info' && /room again/.test(line.message));
  await exporter.close();
  assert.deepEqual([exporter.exported, exporter.dropped, exporter.buffered, exporter.bufferedBytes], [held, 1 + flood.length - held, 0, 0]);
});

describe('close()', () => {
  it('with the collector refusing connections returns within its timeout and counts what is left as dropped', async () => {
    const { exporter, lines } = exporterTo(await closedPort());
    exporter.offer(records(10));
    const started = Date.now();
    await exporter.close(300);
    const took = Date.now() - started;
    assert.ok(took >= 290 && took < 800, `close took ${took} ms`);
    assert.deepEqual([exporter.exported, exporter.dropped, exporter.buffered], [0, 10, 0]);
    assert.equal(lines('warn', /closed before/)[0]?.fields.dropped, 10);
    exporter.offer(records(2));
    assert.deepEqual([exporter.dropped, exporter.buffered], [12, 0], 'offers after close are dropped');
  });

  it('with a collector that never answers returns within its timeout (the request in flight is aborted)', async () => {
    const silent = createServer(() => {});
    cleanups.push(() => closeServer(silent));
    const { exporter } = exporterTo(await listen(silent, 0, '127.0.0.1'), { requestTimeoutMs: 10_000 });
    exporter.offer(records(10));
    const started = Date.now();
    await exporter.close(300);
    const took = Date.now() - started;
    assert.ok(took < 800, `close took ${took} ms`);
    assert.deepEqual([exporter.exported, exporter.dropped], [0, 10]);
  });

  it('with the collector up sends everything buffered, the partial batch too, before it resolves', async () => {
    const receiver = await startReceiver();
    const { exporter } = exporterTo(receiver.port, { batchSize: 2_000, intervalMs: 60_000 });
    const offered = records(4_500);
    exporter.offer(offered);
    await exporter.close();
    assert.deepEqual([exporter.exported, exporter.dropped, exporter.buffered], [4_500, 0, 0]);
    assert.deepEqual(new Set(receiver.records.keys()), uids(offered));
    assert.equal(receiver.requests.length, 3, 'two full batches and the rest');
  });
});

describe('OTEL_EXPORTER_OTLP_HEADERS', () => {
  it('reads comma-separated name=value pairs: names trimmed and lowercased, values percent-decoded', () => {
    assert.deepEqual(parseOtlpHeaders(' API-Key = abc123 ,x-tenant=acme%20corp%2C%20inc,authorization=Basic dXNlcjpwYXNz==,plus=a+b,'), {
      'api-key': 'abc123',
      'x-tenant': 'acme corp, inc',
      authorization: 'Basic dXNlcjpwYXNz==',
      plus: 'a+b',
    });
    assert.deepEqual(parseOtlpHeaders(''), {});
    assert.deepEqual(parseOtlpHeaders('a=1,A=2'), { a: '2' }, 'the later pair wins');
  });

  it('refuses a malformed pair, naming its position and never its value', () => {
    assert.throws(() => parseOtlpHeaders('api-key'), /^Error: item 1 must be name=value/);
    assert.throws(() => parseOtlpHeaders('a=1,=secret'), /^Error: item 2 must be name=value/);
    assert.throws(() => parseOtlpHeaders('api key=secret'), /^Error: item 1 must be name=value/);
    assert.throws(() => parseOtlpHeaders('a=1,token=%zzsecret'), (error: Error) => error.message === 'item 2 (token): bad percent-encoding (write % as %25)');
    assert.throws(() => parseOtlpHeaders('x=a%0D%0Ainjected: 1'), /item 1 \(x\): the decoded value holds a control/);
  });
});

describe('the OTLP logs endpoint', () => {
  it('is OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/logs, else localhost:4318', () => {
    const url = (env: { endpoint?: string; logsEndpoint?: string }) => otlpLogsUrl(env).href;
    assert.equal(url({}), 'http://localhost:4318/v1/logs');
    assert.equal(url({ endpoint: '', logsEndpoint: '' }), 'http://localhost:4318/v1/logs', 'empty is unset');
    assert.equal(url({ endpoint: 'http://collector:4318' }), 'http://collector:4318/v1/logs');
    assert.equal(url({ endpoint: 'https://otlp.example.com/api/otlp/' }), 'https://otlp.example.com/api/otlp/v1/logs');
    assert.equal(url({ endpoint: 'https://otlp.example.com/api/otlp' }), 'https://otlp.example.com/api/otlp/v1/logs');
    assert.equal(url({ endpoint: 'http://a:4318', logsEndpoint: 'https://logs.example.com/ingest' }), 'https://logs.example.com/ingest');
    assert.equal(url({ logsEndpoint: 'http://collector:4318' }), 'http://collector:4318/');
  });

  it('must be an http: or https: URL, the variable at fault named', () => {
    assert.throws(() => otlpLogsUrl({ endpoint: 'collector:4318' }), /^Error: OTEL_EXPORTER_OTLP_ENDPOINT: must be an http: or https: URL$/);
    assert.throws(() => otlpLogsUrl({ endpoint: 'not a url' }), /^Error: OTEL_EXPORTER_OTLP_ENDPOINT: must be an absolute URL$/);
    assert.throws(() => otlpLogsUrl({ endpoint: 'http://ok:4318', logsEndpoint: 'grpc://collector:4317' }), /^Error: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: must be an http: or https: URL$/);
  });
});

describe('ACCESS_LOG_OTLP_BUFFER_SIZE', () => {
  const bufferBytes = (value?: string) => loadConfig({ ACCESS_LOG_EXPORT: 'otlp', ...(value === undefined ? {} : { ACCESS_LOG_OTLP_BUFFER_SIZE: value }) }).accessLogExport?.bufferBytes;

  it('is a size in bytes, 64MB by default', () => {
    assert.equal(bufferBytes(), 64_000_000);
    assert.equal(bufferBytes('256MiB'), 256 * 2 ** 20);
    assert.equal(bufferBytes('1MB'), 1_000_000);
  });

  it('refuses what is not a size of at least 1MB, naming the variable', () => {
    for (const [value, problem] of [['lots', 'must be a size such as 64MB or 256MiB'], ['999kB', 'must be at least 1MB']]) {
      assert.throws(() => bufferBytes(value), (error: unknown) => error instanceof ConfigError && error.problems.includes(`ACCESS_LOG_OTLP_BUFFER_SIZE: ${problem}`));
    }
  });
});
