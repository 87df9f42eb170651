/**
 * `node dist/bench/access-log/otlp-receiver.js`: the least an OTLP/HTTP logs collector does, for measuring
 * what the access-log export costs its sender (access-log-export-cost.ts): node:http on
 * 127.0.0.1:`PORT`, reads each `POST /v1/logs` body and answers 200 `{}` (a full success, OTLP
 * specification "OTLP/HTTP Response"); anything else gets 404. It does not parse what it gets, so
 * its own cost stays out of the way; it runs in a process of its own so that its CPU is not
 * counted as the sender's. Prints `otlp receiver listening on <port>` once ready, and on SIGTERM
 * the requests and bytes it took (`otlp receiver took <requests> requests, <bytes> bytes`).
 */
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 4318);
let requests = 0;
let bytes = 0;

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/logs') {
    req.resume();
    res.writeHead(404).end();
    return;
  }
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}');
  });
});

server.listen(port, '127.0.0.1', () => process.stdout.write(`otlp receiver listening on ${port}\n`));
process.once('SIGTERM', () => {
  process.stdout.write(`otlp receiver took ${requests} requests, ${bytes} bytes\n`);
  server.close();
  server.closeAllConnections();
});
