/**
 * Test scaffolding for ACME Renewal Information (RFC 9773), which Debian's pebble 2.4 lacks: an
 * HTTPS front that relays every request to pebble and adds what pebble would say if it spoke ARI.
 * Its directory is pebble's with a `renewalInfo` resource (§3); `GET renewal-info/<certID>` is
 * answered with the window the test chooses (§4.2). Requests keep their `Host`, so pebble names
 * every URL it hands out (and checks every JWS `url`) on the front's origin: the client talks to
 * the front alone. The CA stays pebble, validation and all. Not a test file.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './listen.js';
import type { Pebble } from './pebble.js';
import { makeTestCa } from './test-certificates.js';

/** RFC 9773 §4.2's answer: a window (epoch ms) and Retry-After (seconds); or an HTTP status to fail with. */
export type RenewalInfoAnswer = { start: number; end: number; retryAfterSeconds?: number } | { status: number };

export interface RenewalInfoFront {
  /** ACME_DIRECTORY_URL: the front's directory. */
  readonly directoryUrl: string;
  /** ACME_CA_FILE: the CA of the front's own listener. */
  readonly caFile: string;
  /** The certIDs asked about (`renewal-info/<certID>`), in order. */
  readonly asked: readonly string[];
  /** The `replaces` field of each newOrder relayed (undefined: an order without one), in order. */
  readonly replaces: ReadonlyArray<string | undefined>;
  close(): Promise<void>;
}

const RENEWAL_INFO_PATH = '/renewal-info/';

/**
 * Starts the front on 127.0.0.1 before `pebble` (its certificate from a CA made in `dir`);
 * `answer` says what `renewal-info/<certID>` answers.
 */
export async function startRenewalInfoFront(pebble: Pebble, dir: string, answer: (certId: string) => RenewalInfoAnswer): Promise<RenewalInfoFront> {
  const ca = makeTestCa(dir, 'renewal-info-front-ca');
  const listener = ca.issue('renewal-info-front', ['localhost', '127.0.0.1']);
  const upstream = new URL(pebble.directoryUrl);
  const agent = new Agent({ keepAlive: true, ca: readFileSync(pebble.caFile) });
  const asked: string[] = [];
  const replaces: Array<string | undefined> = [];
  let newOrderPath: string | undefined;

  const relay = async (req: IncomingMessage, res: ServerResponse) => {
    const body = Buffer.concat(await req.toArray());
    const path = req.url ?? '/';
    if (path === newOrderPath && req.method === 'POST') replaces.push(jwsPayload(body).replaces as string | undefined);
    const answered = await forward(agent, upstream, req, body);
    if (path === upstream.pathname && answered.status === 200) {
      const directory = { ...JSON.parse(answered.body.toString()), renewalInfo: `https://${req.headers.host}${RENEWAL_INFO_PATH}` };
      newOrderPath = new URL(directory.newOrder).pathname;
      return send(res, 200, { ...answered.headers, 'content-type': 'application/json' }, JSON.stringify(directory));
    }
    send(res, answered.status, answered.headers, answered.body);
  };
  const server: Server = createServer({ cert: readFileSync(listener.cert), key: readFileSync(listener.key) }, (req, res) => {
    if (req.url?.startsWith(RENEWAL_INFO_PATH) && req.method === 'GET') return renewalInfo(res, req.url.slice(RENEWAL_INFO_PATH.length));
    relay(req, res).catch((error: Error) => send(res, 502, {}, error.message));
  });
  const renewalInfo = (res: ServerResponse, certId: string) => {
    asked.push(certId);
    const chosen = answer(certId);
    if ('status' in chosen) return send(res, chosen.status, {}, 'unavailable');
    const window = { start: new Date(chosen.start).toISOString(), end: new Date(chosen.end).toISOString() };
    send(res, 200, { 'content-type': 'application/json', ...(chosen.retryAfterSeconds !== undefined && { 'retry-after': String(chosen.retryAfterSeconds) }) }, JSON.stringify({ suggestedWindow: window }));
  };
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    directoryUrl: `https://127.0.0.1:${port}${upstream.pathname}`,
    caFile: ca.caFile,
    asked,
    replaces,
    async close() {
      await closeServer(server);
      agent.destroy();
    },
  };
}

interface Answered {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** Sends `req` (its method, fields with `Host`, and `body`) to pebble and reads the whole answer. */
function forward(agent: Agent, upstream: URL, req: IncomingMessage, body: Buffer): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const { connection: _connection, ...headers } = req.headers;
    const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (answer) => {
      answer.toArray().then((chunks) => {
        const { 'content-length': _length, 'transfer-encoding': _encoding, connection: _close, ...kept } = answer.headers;
        resolve({ status: answer.statusCode ?? 502, headers: kept as Record<string, string | string[]>, body: Buffer.concat(chunks) });
      }, reject);
    });
    out.once('error', reject);
    out.end(body);
  });
}

function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: string | Buffer): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The payload of a JWS in flattened JSON serialization (RFC 7515 §7.2.2), as JSON; {} when it is empty (POST-as-GET). */
function jwsPayload(body: Buffer): Record<string, unknown> {
  const { payload } = JSON.parse(body.toString()) as { payload: string };
  return payload === '' ? {} : (JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>);
}
