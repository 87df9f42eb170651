/**
 * The process of target-process.ts: one target of a service's pool, a process of its own so a
 * test can SIGKILL it. Started with TARGET_ID (what it answers with), TARGET_PORT (0: any free
 * port; a restart passes the old one) and TARGET_BEHAVIOUR (JSON, a {@link TargetBehaviour});
 * prints `listening <port>` once it listens on 127.0.0.1.
 *
 * Every request but a probe of `/healthz` is told on stdout, as it arrives and before anything
 * else, as `arrived <method> <x-test-request or -> <path>`: stdout is a pipe, which Node writes
 * synchronously on Linux, so a line written before a SIGKILL is never lost. It is then answered
 * `behaviour.status` after `behaviour.delayMs` (a request body is read whole first) with JSON
 * `{ target, method, path, cookie }` (`cookie` the Cookie header as received, or null) and
 * `behaviour.setCookies` as `Set-Cookie`, or, while
 * `behaviour.reset`, its connection is reset (TCP RST) unanswered. `/healthz`
 * answers 200 while `behaviour.healthy`, else 503, and prints `probe <status>`. The parent changes
 * the behaviour over IPC (`{ seq, set }`, acknowledged with `{ ack: seq }`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How a target answers; each field can be changed while it runs. */
export interface TargetBehaviour {
  /** The status of every answer but `/healthz`'s (default 200). */
  status: number;
  /** Wait before the response head, in ms (default 0). */
  delayMs: number;
  /** `/healthz` answers 200 (true, the default) or 503. */
  healthy: boolean;
  /** Every request but `/healthz`'s has its connection reset once it arrived, unanswered (default false). */
  reset: boolean;
  /** `Set-Cookie` values every answer but `/healthz`'s carries (default none). */
  setCookies: string[];
}

/** What a target answers with. */
export interface TargetAnswer {
  target: string;
  method: string;
  path: string;
  cookie: string | null;
}

export const DEFAULT_BEHAVIOUR: TargetBehaviour = { status: 200, delayMs: 0, healthy: true, reset: false, setCookies: [] };

function serve(id: string, port: number, behaviour: TargetBehaviour): void {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      const status = behaviour.healthy ? 200 : 503;
      process.stdout.write(`probe ${status}\n`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(behaviour.healthy ? 'ok' : 'down');
      return;
    }
    const requestId = req.headers['x-test-request'];
    process.stdout.write(`arrived ${req.method} ${typeof requestId === 'string' ? requestId : '-'} ${req.url}\n`);
    if (behaviour.reset) {
      req.socket.resetAndDestroy();
      return;
    }
    const { status, delayMs, setCookies } = behaviour;
    req.resume();
    req.once('end', () => {
      const answer = () => {
        if (res.destroyed) return;
        const body: TargetAnswer = { target: id, method: req.method ?? '', path: req.url ?? '', cookie: req.headers.cookie ?? null };
        res.writeHead(status, { 'content-type': 'application/json', ...(setCookies.length > 0 ? { 'set-cookie': setCookies } : {}) }).end(JSON.stringify(body));
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
  process.on('message', (message: { seq: number; set: Partial<TargetBehaviour> }) => {
    Object.assign(behaviour, message.set);
    process.send!({ ack: message.seq });
  });
  // The parent going away (a test run killed) takes the target with it.
  process.on('disconnect', () => process.exit(0));
}

const { TARGET_ID, TARGET_PORT, TARGET_BEHAVIOUR } = process.env;
if (TARGET_ID !== undefined) {
  serve(TARGET_ID, Number(TARGET_PORT ?? 0), { ...DEFAULT_BEHAVIOUR, ...(TARGET_BEHAVIOUR ? (JSON.parse(TARGET_BEHAVIOUR) as Partial<TargetBehaviour>) : {}) });
}
