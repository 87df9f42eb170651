/**
 * A rolling restart loses nothing (README "Running a fleet"): a proxy process stopped with SIGTERM under keep-alive
 * load says `Connection: close` on every response from the signal on (those in flight included),
 * so its clients open their next request elsewhere (here, as a load balancer would, on the other
 * proxy), and it exits as soon as its last response is written, well within the 10 s drain limit.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/** Concurrent keep-alive clients, and how long the load runs before the signal, in ms. */
const CLIENTS = 8;
const LOAD_BEFORE_SIGNAL_MS = 600;
/** The request in flight when the signal comes: how long the upstream takes to answer it, in ms. */
const IN_FLIGHT_MS = 1_500;

let upstream: Upstream;

const env = useAdminSession({ topology: 'split' }, async (env) => {
  // Answers after `?ms=` milliseconds: requests that are in flight when the proxy is told to stop.
  upstream = await startUpstream((req, res) => {
    const ms = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('done'), ms);
  });
  await env.split.createService(env.admin, { name: 'Slow', path: '/slow', targetUrl: upstream.origin, requireAuth: false });
});
after(() => upstream?.close());

/** What one request to the stopping proxy came to. */
type Outcome =
  | { kind: 'answered'; at: number; status: number; connection: string | undefined }
  | { kind: 'moved'; reason: string } // refused, or reset before any response: a load balancer retries elsewhere
  | { kind: 'failed'; reason: string }; // broken after the response began: the client saw an error

async function send(agent: Agent, url: string): Promise<Outcome> {
  let answered: { at: number; status: number; connection: string | undefined } | undefined;
  try {
    const response = await request(url, { dispatcher: agent });
    const connection = response.headers.connection;
    answered = { at: Date.now(), status: response.statusCode, connection: typeof connection === 'string' ? connection : undefined };
    await response.body.text();
    return { kind: 'answered', ...answered };
  } catch (error) {
    const reason = String((error as { code?: unknown }).code ?? error);
    return answered === undefined ? { kind: 'moved', reason } : { kind: 'failed', reason };
  }
}

test('SIGTERM under keep-alive load: Connection: close from the signal on, nothing fails, the proxy exits when its last response is written', async (t) => {
  const [stayer, leaver] = env.split.proxies;
  const agent = new Agent({ connections: CLIENTS, pipelining: 1 });
  const outcomes: Outcome[] = [];
  let signalAt = Number.POSITIVE_INFINITY;
  let stopLoad = false;

  // Each client sends to the leaving proxy until it is refused there, then (as a load balancer
  // would) to the other one; every outcome at the leaving proxy is kept.
  const clients = Array.from({ length: CLIENTS }, async () => {
    let target = leaver.url;
    while (!stopLoad) {
      const outcome = await send(agent, `${target}/slow/x?ms=20`);
      if (target === leaver.url) outcomes.push(outcome);
      if (outcome.kind === 'moved') target = stayer.url;
    }
  });
  await sleep(LOAD_BEFORE_SIGNAL_MS);
  const inFlight = send(agent, `${leaver.url}/slow/long?ms=${IN_FLIGHT_MS}`);
  await sleep(100);
  signalAt = Date.now();
  const exited = leaver.process.stop('SIGTERM');
  const code = await exited;
  const exitedAt = Date.now();
  stopLoad = true;
  await Promise.all(clients);
  const long = await inFlight;
  await agent.close();

  const answered = outcomes.filter((o): o is Extract<Outcome, { kind: 'answered' }> => o.kind === 'answered');
  const afterSignal = answered.filter((o) => o.at >= signalAt);
  const failed = outcomes.filter((o) => o.kind === 'failed');
  const moved = outcomes.filter((o) => o.kind === 'moved');
  t.diagnostic(
    `requests to the stopping proxy: ${outcomes.length}; answered ${answered.length} (${afterSignal.length} after the signal); ` +
      `moved to the other proxy ${moved.length} (${[...new Set(moved.map((o) => o.reason))].join(', ')}); failed ${failed.length}; ` +
      `exit ${code} after ${exitedAt - signalAt} ms (the in-flight request took ${IN_FLIGHT_MS} ms)`,
  );
  assert.equal(code, 0);
  assert.deepEqual(failed, [], 'no request failed once its response began');
  assert.ok(answered.every((o) => o.status === 200));
  assert.ok(answered.length - afterSignal.length > 50, 'load ran before the signal');
  // A response written before the process handled the signal may arrive after it: at most one per
  // connection. Without the rule every client would get keep-alive answers until the 10 s limit.
  const keptAlive = afterSignal.filter((o) => o.connection !== 'close');
  assert.ok(keptAlive.length <= CLIENTS, `${keptAlive.length} keep-alive answers after the signal`);
  // Which of the clients' next requests came before the process handled the signal is the
  // scheduler's to decide on a busy machine (all of them, at times): the request in flight at the
  // signal is the one sure to be answered after it, and it must say close.
  assert.equal(long.kind, 'answered');
  assert.deepEqual(long.kind === 'answered' && [long.status, long.connection], [200, 'close'], 'the request in flight at the signal is answered, with close');
  // It waited for its last response (about IN_FLIGHT_MS - 100 ms) and then went, not at the 10 s limit.
  assert.ok(exitedAt - signalAt < IN_FLIGHT_MS + 3_000, `exited ${exitedAt - signalAt} ms after the signal`);
});
