/**
 * `node dist/bench/tracing/request-identity-cost.js`: what a request's id and trace cost the data
 * plane (design.md §3.10), in-process, in ns per request, so that sub-µs costs show through a busy
 * machine's noise (the gateway stacks of tracing-cost.ts cannot resolve them). Each round times
 * `RequestIdentities.begin` on a fresh response against making the response alone: tracing off
 * (the request id), and tracing on but not sampled (a trace id, the sampler, the `traceparent` a
 * target gets). Rounds are interleaved; the medians are printed.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { loadConfig } from '../../shared/config/config.js';
import { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { createLogger } from '../../shared/logger.js';
import { openSpanExport } from '../../shared/tracing/span-export.js';
import { readInboundHeaders } from '../../proxy/headers/inbound-headers.js';
import { RequestIdentities } from '../../proxy/pipeline/request-identity.js';

const ROUNDS = 7;
const PER_ROUND = 400_000;

const logger = createLogger('silent', 'bench');
const traced = loadConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER_ARG: '0' });
const spans = openSpanExport(traced.tracing, 'bench', logger);
const untraced = new RequestIdentities(new TrustedProxies([]), loadConfig({}).tracing, undefined);
const unsampled = new RequestIdentities(new TrustedProxies([]), traced.tracing, spans);
const req = new IncomingMessage(new Socket());
req.method = 'GET';
req.url = '/protected/x';
req.rawHeaders = ['Host', 'gateway.example', 'Cookie', 'gw_session=abc', 'Accept', '*/*'];
const inbound = readInboundHeaders(req.rawHeaders);
let sink: unknown;

/** ns per call of `work`, after a warm-up. */
function time(work: () => void): number {
  for (let i = 0; i < PER_ROUND / 8; i++) work();
  const start = process.hrtime.bigint();
  for (let i = 0; i < PER_ROUND; i++) work();
  return Number(process.hrtime.bigint() - start) / PER_ROUND;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const off: number[] = [];
const on: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const base = time(() => (sink = new ServerResponse(req)));
  off.push(time(() => (sink = untraced.begin(req, new ServerResponse(req), inbound, '/protected/x', '127.0.0.1'))) - base);
  on.push(time(() => (sink = unsampled.begin(req, new ServerResponse(req), inbound, '/protected/x', '127.0.0.1').trace!.traceParent())) - base);
}
void sink;
await spans?.shutdown();
process.stdout.write(`request id, tracing off: ${median(off).toFixed(0)} ns per request (rounds ${off.map((n) => n.toFixed(0)).join(', ')})\n`);
process.stdout.write(`tracing on, not sampled: ${median(on).toFixed(0)} ns per request (rounds ${on.map((n) => n.toFixed(0)).join(', ')})\n`);
