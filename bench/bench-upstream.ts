/**
 * The benchmark's upstream: a minimal node:http server that answers every request 200 with the
 * same small fixed body, so that the upstream costs as little CPU as possible and the proxies in
 * front of it are what gets measured. A request body, if any, is read and discarded.
 *
 * Run as a child process (`node dist/bench/bench-upstream.js`) with `PORT` (required) and
 * `EXTRA_PORTS` (optional, comma-separated: the same server on more ports, the targets of a
 * pool). Once listening on all of them it prints one JSON line `{"ready":true,"port":<port>}` on
 * stdout.
 */
import { createServer, type Server } from 'node:http';
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
  const extra = (process.env.EXTRA_PORTS ?? '').split(',').filter(Boolean).map(Number);
  const servers = [port, ...extra].map((each) => {
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      req.resume();
      res.writeHead(200, HEADERS);
      res.end(BODY);
    });
    return new Promise<Server>((resolve) => server.listen(each, '127.0.0.1', () => resolve(server)));
  });
  void Promise.all(servers).then((listening) => {
    process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);
    process.once('SIGTERM', () => {
      let open = listening.length;
      for (const server of listening) {
        server.close(() => --open === 0 && process.exit(0));
        server.closeAllConnections();
      }
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
