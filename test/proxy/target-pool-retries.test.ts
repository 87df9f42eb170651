/**
 * What a service's pool retries on another target (design.md §4.13 "Retries"), on the data plane alone
 * against real target processes (test/support/target-process.ts), one of which answers 503 to
 * everything (outlier detection tuned so that it stays in rotation):
 * - a GET, or a DELETE without a body, answered 503 is sent to another target, whose 200 the
 *   client gets; a POST, or a PUT with a body, answered 503 is not: the client gets the 503;
 * - likewise a connection reset before the response head: a GET is retried, a POST gets 502;
 * - the access log keeps one record per client request, retried or not;
 * - each target is tried at most once per request: with every target failing, the client gets
 *   the last 503 after one attempt on each;
 * - `retries: 0` turns the retry after a request was sent off, but not the one after a refused
 *   connection (a killed target), for any method, a chunked body with trailer fields too (sent
 *   through trailer-dispatch.ts).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Service } from '../../shared/types.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { eventually } from '../support/eventually.js';
import { PoolClient, runLoad, targetFigures, type Reply } from '../support/pool-traffic.js';
import { service } from '../support/samples.js';
import { startTargetProcess, type TargetProcess } from '../support/target-process.js';

let plane: TestDataPlane;
let http: PoolClient;
let ok1: TargetProcess;
let ok2: TargetProcess;
let failing: TargetProcess;
let failing2: TargetProcess;
let dead: TargetProcess;
let resetting: TargetProcess;
const services = new Map<string, Service>();

/** Outlier detection that never ejects within these tests. */
const LENIENT = { maxFails: 100, windowSeconds: 1, ejectSeconds: 1 };

before(async () => {
  [ok1, ok2, failing, failing2, dead, resetting] = await Promise.all([
    startTargetProcess('ok1'),
    startTargetProcess('ok2'),
    startTargetProcess('failing', { status: 503 }),
    startTargetProcess('failing2', { status: 503 }),
    startTargetProcess('dead'),
    startTargetProcess('resetting', { reset: true }),
  ]);
  await dead.kill();
  plane = await startDataPlane();
  http = new PoolClient(plane.origin, 4);
  const pool = (path: string, members: TargetProcess[], retries: number): Service => {
    const made = service({ path, targetUrl: members[0]!.url, targets: members.map((member) => ({ url: member.url, weight: 1 })), outlierDetection: LENIENT, retries });
    services.set(path, made);
    return made;
  };
  await plane.publish([
    pool('/retry', [failing, ok1, ok2], 1),
    pool('/no-retry', [failing, ok1, ok2], 0),
    pool('/all-failing', [failing, failing2], 5),
    pool('/refused', [dead, ok1, ok2], 0),
    pool('/reset', [resetting, ok1, ok2], 1),
  ]);
});
after(async () => {
  await http?.close();
  await Promise.all([ok1, ok2, failing, failing2, dead, resetting].map((target) => target?.close()));
  await plane?.close();
});

/** `count` requests one at a time (round robin over three: every third goes first to `failing`). */
function sequence(count: number, send: (n: number) => Promise<Reply>): Promise<Reply[]> {
  return runLoad({ concurrency: 1, total: count, maxMs: 10_000, send });
}

/**
 * A POST through the data plane with a chunked body in two chunks, announcing and sending the
 * trailer field `x-digest` when `withTrailers` (node:http: undici cannot send trailers).
 */
function chunkedPost(path: string, withTrailers: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'transfer-encoding': 'chunked', ...(withTrailers ? { trailer: 'x-digest' } : {}) };
    const req = httpRequest({ host: '127.0.0.1', port: plane.port, path, method: 'POST', agent: false, headers, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.write('hello ');
    req.write('world');
    if (withTrailers) req.addTrailers({ 'x-digest': 'sha-256=abc' });
    req.end();
  });
}

/** How many times each of `targets` saw request `id`. */
function attempts(id: string, ...targets: TargetProcess[]): number[] {
  return targets.map((target) => target.arrivals.filter((arrival) => arrival.requestId === id).length);
}

describe('a target answering 503', () => {
  it('a GET or a DELETE (no body) is retried on another target, and the client gets its 200', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const replies = await sequence(30, (n) => http.send(`/retry/${method}/${n}`, { method }));
      const retried = replies.filter((reply) => failing.arrivedIds().has(reply.id));
      assert.equal(retried.length, 10, `${method}: every third request went to the failing target first`);
      for (const reply of replies) {
        assert.equal(reply.status, 200, `${method} ${reply.id}: ${reply.status} ${reply.text}`);
        assert.ok(reply.target === 'ok1' || reply.target === 'ok2');
      }
      for (const reply of retried) assert.deepEqual(attempts(reply.id, failing, ok1, ok2).reduce((a, b) => a + b), 2, 'two attempts in all');
    }
  });

  it('a POST, or a PUT with a body, is not retried: the client gets the 503', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      const replies = await sequence(30, (n) => http.send(`/retry/${method}/${n}`, { method, body: `body ${n}` }));
      const toFailing = replies.filter((reply) => failing.arrivedIds().has(reply.id));
      assert.equal(toFailing.length, 10, `${method}: every third request went to the failing target`);
      for (const reply of replies) {
        if (toFailing.includes(reply)) {
          assert.equal(reply.status, 503, `${method} ${reply.id}`);
          assert.equal(reply.target, 'failing', 'the failing target\'s own answer');
          assert.deepEqual(attempts(reply.id, ok1, ok2), [0, 0], 'sent to another target too');
        } else {
          assert.equal(reply.status, 200, `${method} ${reply.id}: ${reply.status} ${reply.text}`);
        }
      }
    }
  });

  it('tries each target once: with every target failing, the client gets a 503 after one attempt on each', async () => {
    const replies = await sequence(6, (n) => http.send(`/all-failing/${n}`));
    for (const reply of replies) {
      assert.equal(reply.status, 503);
      assert.deepEqual(attempts(reply.id, failing, failing2), [1, 1], `${reply.id}: attempts on each target`);
    }
  });
});

describe('the access log', () => {
  it('keeps one record per client request, retried or not, with the status the client got and the target that answered', async () => {
    const svc = services.get('/retry')!;
    const replies = await sequence(30, (n) => (n % 2 ? http.send(`/retry/logged/${n}`, { method: 'POST', body: 'x' }) : http.send(`/retry/logged/${n}`)));
    assert.ok(replies.some((reply) => reply.method === 'GET' && failing.arrivedIds().has(reply.id)), 'a GET was retried');
    const logged = () => plane.records.filter((record) => record.serviceId === svc.id && record.path.startsWith('/retry/logged/'));
    await eventually('30 records', () => logged().length >= 30, 5_000);
    const records = logged();
    assert.equal(records.length, 30);
    const byPath = new Map(records.map((record) => [record.path, record]));
    assert.equal(byPath.size, 30, 'one record per request');
    replies.forEach((reply, i) => {
      const record = byPath.get(`/retry/logged/${i}`);
      assert.ok(record, `request ${i} logged`);
      assert.equal(record.statusCode, reply.status, `request ${i}: logged ${record.statusCode}, the client got ${reply.status}`);
      assert.equal(record.method, reply.method);
      const answered = [failing, ok1, ok2].find((target) => target.id === reply.target);
      assert.ok(answered, `request ${i}: answered by ${reply.target}`);
      assert.equal(record.target, answered.url, `request ${i}: the record names the target that answered`);
    });
  });
});

describe('a target resetting the connection before its response head', () => {
  it('a GET is retried on another target; a POST is not (502)', async () => {
    const replies = await sequence(30, (n) => (n % 2 ? http.send(`/reset/${n}`, { method: 'POST', body: `body ${n}` }) : http.send(`/reset/${n}`)));
    const reached = replies.filter((reply) => resetting.arrivedIds().has(reply.id));
    assert.ok(reached.some((reply) => reply.method === 'GET') && reached.some((reply) => reply.method === 'POST'), 'GETs and POSTs reached the resetting target');
    for (const reply of replies) {
      if (reply.method === 'POST' && reached.includes(reply)) {
        assert.equal(reply.status, 502, `POST ${reply.id}: ${reply.status} ${reply.text}`);
        assert.deepEqual(JSON.parse(reply.text), { error: 'Bad gateway' });
        assert.deepEqual(attempts(reply.id, ok1, ok2), [0, 0], 'sent to another target too');
      } else {
        assert.equal(reply.status, 200, `${reply.method} ${reply.id}: ${reply.status} ${reply.text}`);
      }
    }
  });
});

describe('retries: 0', () => {
  it('turns off the retry of a request that reached a target: a GET answered 503 reaches the client', async () => {
    const replies = await sequence(30, (n) => http.send(`/no-retry/${n}`));
    const toFailing = replies.filter((reply) => failing.arrivedIds().has(reply.id));
    assert.equal(toFailing.length, 10);
    for (const reply of replies) assert.equal(reply.status, toFailing.includes(reply) ? 503 : 200, reply.id);
    for (const reply of toFailing) assert.deepEqual(attempts(reply.id, ok1, ok2), [0, 0]);
  });

  it('still retries a refused connection (a killed target), for GET and POST alike', async () => {
    const svc = services.get('/refused')!;
    const before = targetFigures(await plane.metrics.registry.metrics(), svc.id, dead.url);
    const replies = await sequence(30, (n) => (n % 2 ? http.send(`/refused/${n}`, { method: 'POST', body: `body ${n}` }) : http.send(`/refused/${n}`)));
    for (const reply of replies) {
      assert.equal(reply.status, 200, `${reply.method} ${reply.id}: ${reply.status} ${reply.text}`);
      assert.ok(reply.target === 'ok1' || reply.target === 'ok2');
      if (reply.method === 'POST') assert.deepEqual(attempts(reply.id, ok1, ok2).reduce((a, b) => a + b), 1, 'a POST reached one target once');
    }
    const after = targetFigures(await plane.metrics.registry.metrics(), svc.id, dead.url);
    assert.equal(after.requests! - (before.requests ?? 0), 10, 'every third request was tried on the dead target first');
    assert.equal(after.errors! - (before.errors ?? 0), 10);
    assert.equal(after.healthy, 1, 'kept in rotation (maxFails 100)');
  });

  it('still retries a refused connection for a chunked POST', async () => {
    for (let n = 0; n < 6; n++) {
      const reply = await chunkedPost(`/refused/chunked/${n}`, false);
      assert.equal(reply.status, 200, `POST ${n}: ${reply.status} ${reply.body}`);
    }
  });

  it('still retries a refused connection for a chunked POST that announces trailer fields', async () => {
    for (let n = 0; n < 6; n++) {
      const reply = await chunkedPost(`/refused/trailers/${n}`, true);
      assert.equal(reply.status, 200, `POST ${n}: ${reply.status} ${reply.body}`);
    }
  });
});
