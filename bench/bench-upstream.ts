/**
 * The benchmark's upstream: a minimal node:http server that answers every request 200 with the
 * same small fixed body, so that the upstream costs as little CPU as possible and the proxies in
 * front of it are what gets measured. A request body, if any, is read and discarded.
 *
 * Run as a child process (`node dist/bench/bench-upstream.js`) with `PORT` (required). Once
 * listening it prints one JSON line `{"ready":true,"port":<port>}` on stdout.
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** The response body (bytes as UTF-8; 13 bytes), fixed for every request. */
export const UPSTREAM_BODY = 'hello, bench\n';

const BODY = Buffer.from(UPSTREAM_BODY);
const HEADERS = {
  'content-type': 'text/plain; charset=utf-8',
  'content-length': String(BODY.length),
};

function main(): void {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('bench-upstream: PORT must be set to a port number');
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
  server.listen(port, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);
  });
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
