/**
 * `node dist/bench/tracing/sampled-request-cost.js`: what a sampled request's spans cost the data
 * plane, in-process, CPU µs per request, export included (design.md §3.10). Each sampled request
 * makes what a protected request in split mode makes on a session cache hit: the server span
 * (`RequestIdentities.begin`, named for its route, ended when the response closes), a `rate limit`
 * child and the CLIENT span of its attempt with the `traceparent` sent on. The spans go through the
 * real span export (batch span processor, OTLP/HTTP JSON) to a span counter in a child process, so
 * that receiving them costs this process nothing. CPU is `process.cpuUsage()` (all threads) from
 * the first request until the export has delivered the last span, minus the same loop with tracing
 * off. Rounds alternate; medians are printed, with the average at the default 1 % sampling from
 * this figure and request-identity-cost.ts's unsampled one.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../shared/config/config.js';
import { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { createLogger } from '../../shared/logger.js';
import { openSpanExport, SpanKind, type SpanExport } from '../../shared/tracing/span-export.js';
import { readInboundHeaders } from '../../proxy/headers/inbound-headers.js';
import { nameServerSpan, RequestIdentities } from '../../proxy/pipeline/request-identity.js';
import { startSpanCounter } from './span-counter.js';

const ROUNDS = 5;
const REQUESTS = 20_000;
/** Requests made every {@link TURN_MS}: 5,000 a second (15,000 spans), within what the export sustains (none dropped). */
const PER_TURN = 50;
const TURN_MS = 10;

/** The child: a span counter, its endpoint sent to the parent; stops when the parent disconnects. */
async function serveCounter(): Promise<void> {
  const counter = await startSpanCounter();
  process.send!({ endpoint: counter.endpoint });
  process.once('disconnect', () => void counter.close());
}

async function measure(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--counter']);
  const [{ endpoint }] = (await once(child, 'message')) as [{ endpoint: string }];
  const sampled: number[] = [];
  try {
    await run(endpoint, true, 2_000); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const off = await run(endpoint, false, REQUESTS);
      sampled.push((await run(endpoint, true, REQUESTS)) - off);
    }
  } finally {
    stop(child);
  }
  const median = [...sampled].sort((a, b) => a - b)[sampled.length >> 1]!;
  process.stdout.write(`a sampled request's spans (server, rate limit, client), exported: ${median.toFixed(1)} µs CPU per request (rounds ${sampled.map((n) => n.toFixed(1)).join(', ')})\n`);
  process.stdout.write(`at 1 %: ${(median / 100).toFixed(2)} µs per request from sampled ones, plus the unsampled trace (request-identity-cost.js)\n`);
}

/** CPU µs per request for `requests` requests, every one sampled (`traced`) or tracing off. */
async function run(endpoint: string, traced: boolean, requests: number): Promise<number> {
  const config = loadConfig(traced ? { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on' } : {});
  const spans = openSpanExport(config.tracing, 'bench', createLogger('silent', 'bench'));
  const identities = new RequestIdentities(new TrustedProxies([]), config.tracing, spans);
  const started = process.cpuUsage();
  for (let done = 0; done < requests; done += PER_TURN) {
    for (let i = 0; i < PER_TURN; i++) oneRequest(identities, spans);
    await new Promise((resolve) => setTimeout(resolve, TURN_MS));
  }
  await spans?.shutdown();
  if (spans !== undefined && spans.counts.exported !== requests * 3) throw new Error(`exported ${spans.counts.exported} spans of ${requests * 3} (${spans.counts.dropped} dropped)`);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / requests;
}

const req = new IncomingMessage(new Socket());
req.method = 'GET';
req.url = '/protected/bench?page=2';
req.rawHeaders = ['Host', 'gateway.example', 'Cookie', 'gw_session=abc', 'User-Agent', 'autocannon'];
req.headers = { host: 'gateway.example', 'user-agent': 'autocannon' };
const inbound = readInboundHeaders(req.rawHeaders);

/** One protected request's tracing, as proxy-plane.ts and exchange.ts do it. */
function oneRequest(identities: RequestIdentities, spans: SpanExport | undefined): void {
  const res = new ServerResponse(req);
  const { trace } = identities.begin(req, res, inbound, '/protected/bench', '127.0.0.1');
  nameServerSpan(trace, 'GET', '/protected', 'service-id');
  if (spans !== undefined) trace!.child('rate limit', SpanKind.INTERNAL, { 'db.system.name': 'redis' })!.end();
  const client = trace?.child('GET', SpanKind.CLIENT, { 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'server.port': 8080, 'url.full': 'http://127.0.0.1:8080/bench' });
  trace?.traceParent(client);
  client?.setAttribute('http.response.status_code', 200);
  client?.end();
  res.statusCode = 200;
  res.emit('close');
}

function stop(child: ChildProcess): void {
  child.disconnect();
  child.kill();
}

if (process.argv[2] === '--counter') await serveCounter();
else await measure();
