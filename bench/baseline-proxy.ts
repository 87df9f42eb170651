/**
 * The benchmark's baseline: a bare pass-through reverse proxy, node:http in front of an undici
 * `Pool`, streaming both bodies, with only the header handling any correct proxy needs
 * (hop-by-hop fields and `Host` dropped). No routing, sessions, rate limits, logging or metrics:
 * what is left is the cost of proxying HTTP with Node and undici, the floor the gateway is
 * compared against.
 *
 * Run as a child process (`node dist/bench/baseline-proxy.js`) with:
 * - `PORT`: the listening port (all workers share it);
 * - `UPSTREAM_URL`: the origin every request is forwarded to, path and query kept;
 * - `WORKERS`: worker processes (node:cluster), default 1 (then no cluster: one process).
 * The primary prints one JSON line `{"ready":true,"port":<port>,"workers":<n>}` on stdout once every
 * worker listens. The pool settings match the gateway's (128 connections per origin, no pipelining).
 */
import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Pool, type Dispatcher } from 'undici';

/** Connections kept to the upstream per worker: the gateway's CONNECTIONS_PER_ORIGIN. */
const UPSTREAM_CONNECTIONS = 128;

/** Hop-by-hop fields (RFC 9110 §7.6.1) and `host` (undici sets the target's). */
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

/** Streams one upstream response into the client's response, with backpressure. */
class PassThrough implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;

  constructor(private readonly res: ServerResponse) {
    res.on('drain', () => this.#controller?.resume());
    res.on('close', () => {
      if (!res.writableFinished) this.#controller?.abort(new Error('client closed'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    const out: string[] = [];
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined || DROPPED.has(name)) continue;
      if (Array.isArray(value)) for (const item of value) out.push(name, item);
      else out.push(name, value);
    }
    this.res.writeHead(statusCode, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, _error: Error): void {
    if (this.res.headersSent) this.res.destroy();
    else this.res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway\n');
  }
}

/** The request's header list for undici: the client's fields minus {@link DROPPED}. */
function forwardHeaders(req: IncomingMessage): string[] {
  const raw = req.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!DROPPED.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** Serves on `port`; calls `onListening` once it listens. */
function runWorker(port: number, upstream: string, onListening: () => void): void {
  const pool = new Pool(upstream, { connections: UPSTREAM_CONNECTIONS, pipelining: 1 });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    pool.dispatch(
      {
        path: req.url ?? '/',
        method: req.method as Dispatcher.HttpMethod,
        headers: forwardHeaders(req),
        body: hasBody ? req : null,
      },
      new PassThrough(res),
    );
  });
  server.listen(port, onListening);
  process.once('SIGTERM', () => {
    server.close(() => void pool.close().then(() => process.exit(0)));
    server.closeIdleConnections();
  });
}

function announceReady(port: number, workers: number): void {
  process.stdout.write(`${JSON.stringify({ ready: true, port, workers })}\n`);
}

function runPrimary(port: number, workers: number): void {
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('message', (message) => {
      if (message === 'ready' && ++ready === workers) announceReady(port, workers);
    });
  }
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  });
}

function main(): void {
  const port = Number(process.env.PORT);
  const upstream = process.env.UPSTREAM_URL;
  const workers = Number(process.env.WORKERS ?? '1');
  if (!Number.isInteger(port) || port <= 0 || !upstream || !Number.isInteger(workers) || workers < 1) {
    throw new Error('baseline-proxy: set PORT, UPSTREAM_URL and WORKERS (≥ 1)');
  }
  // One worker runs in this process, as the gateway's PROXY_WORKERS=1 does: no primary beside it.
  if (workers === 1) runWorker(port, upstream, () => announceReady(port, 1));
  else if (cluster.isPrimary) runPrimary(port, workers);
  else runWorker(port, upstream, () => process.send?.('ready'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
