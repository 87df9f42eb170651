import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { apiClient, createService, type ApiResponse } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { startSplitGateway } from '../support/split-gateway.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * `GET /api/services/:id/logs` (interface.md §2.2, §4.2; design.md §4.6) and the console's
 * service page over the access log's day files, in embedded and in split mode: every record comes
 * from a real request proxied to a real upstream (signed-in users by their session, anonymous
 * callers refused by the gateway itself), stored by the admin's writer thread (in split mode
 * through the Redis stream) and read back through the reader thread. The expectations are what
 * the test sent and what each request got, its `X-Request-Id` included (design.md §3.10).
 */

const PREFIX = '/logged';
/** Requests the test proxies, in this order, one at a time. */
const REQUESTS = 24;
const METHODS = ['GET', 'POST', 'DELETE'] as const;
const UPSTREAM_STATUSES = [200, 201, 302, 404, 503] as const;
const RECORD_KEYS = ['count', 'host', 'id', 'ip_address', 'method', 'path', 'path_truncated', 'protocol', 'request_id', 'response_time_ms', 'service_id', 'span_id', 'status_code', 'target', 'timestamp', 'trace_id', 'user_id'];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** One request as the test sent it and the status it got: what its record must say. */
interface Sent {
  path: string;
  method: string;
  status_code: number;
  user_id: string | null;
  /** The `X-Request-Id` of its answer. */
  request_id: string;
}

/** A record as the API lists it. */
interface LogRecord extends Sent {
  id: number;
  service_id: string;
  response_time_ms: number;
  ip_address: string;
  host: string | null;
  timestamp: string;
}

type Credentials = { cookie: string; csrfToken: string };

/** What each mode provides: where to send proxied requests and API calls, and sessions. */
interface Deployment {
  /** Where the proxied requests go (one listener, so their records arrive in the order sent). */
  proxyUrl: string;
  /** The admin API and console (ADMIN_PORT). */
  adminUrl: string;
  signIn(user: { sub: string; name: string; email: string; isAdmin: boolean }): Promise<Credentials>;
  close(): Promise<void>;
}

/** An upstream that answers `…/status/<code>/…` with that status (201, 302, 404, 503 …), else 200. */
function statusUpstream(): Promise<Upstream> {
  return startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = Number(/\/status\/(\d{3})\//.exec(req.url ?? '')?.[1] ?? 200);
      res.writeHead(status, { 'content-type': 'text/plain', ...(status === 302 ? { location: '/elsewhere' } : {}) }).end('ok');
    });
  });
}

/**
 * The access-log API and console checks against a deployment `start` makes (run once for the
 * describe block that calls this).
 */
function checkAccessLogApi(start: () => Promise<Deployment>): void {
  let deployment: Deployment;
  let upstream: Upstream;
  let admin: Credentials;
  let token: string;
  let serviceId: string;
  /** The requests proxied, oldest first. */
  const sent: Sent[] = [];
  /** The service's records as the API lists them unfiltered: newest first. */
  let all: LogRecord[];
  let call: ReturnType<typeof apiClient>;
  const logs = (query: string) => call('GET', `/api/services/${serviceId}/logs${query}`, { as: admin });
  const shown = (response: ApiResponse): Sent[] => response.json.logs.map(sentOf);
  /** The records of `all` that pass `keep`, newest first, as {@link Sent}. */
  const expected = (keep: (record: LogRecord) => boolean): Sent[] => all.filter(keep).map(sentOf);

  before(async () => {
    upstream = await statusUpstream();
    deployment = await start();
    call = apiClient(deployment.adminUrl);
    admin = await deployment.signIn({ sub: 'admin-sub', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true });
    const created = await call('POST', '/api/tokens', { as: admin, json: { name: 'log reader', scope: 'read' } });
    assert.equal(created.status, 201, created.text);
    token = created.json.secret;
    serviceId = await createService(deployment.adminUrl, admin, { name: 'Logged', path: PREFIX, targetUrl: upstream.origin, requireAuth: true });
    const users = {
      'user-a': await deployment.signIn({ sub: 'user-a', name: 'Ann', email: 'ann@example.com', isAdmin: false }),
      'user-b': await deployment.signIn({ sub: 'user-b', name: 'Bob', email: 'bob@example.com', isAdmin: false }),
    };
    // The route reaches the proxy a moment after it is created (at once in embedded mode).
    let first: Answer | undefined;
    await eventually('the route', async () => (first = await answerTo(`${deployment.proxyUrl}${PREFIX}/`, users['user-a'].cookie)).status === 200);
    sent.push({ path: `${PREFIX}/`, method: 'GET', status_code: 200, user_id: 'user-a', request_id: first!.requestId });

    for (let i = 0; i < REQUESTS; i++) {
      const user = i % 4 === 3 ? null : i % 4 === 2 ? 'user-b' : 'user-a';
      const path = `${PREFIX}/status/${UPSTREAM_STATUSES[i % 5]}/item-${i}?page=${i}`;
      const method = METHODS[i % 3]!;
      const response = await request(`${deployment.proxyUrl}${path}`, {
        method,
        headers: { ...(user ? { cookie: users[user].cookie } : {}), accept: 'application/json' },
      });
      await response.body.dump();
      // Signed in: the upstream's status; anonymous: the gateway's refusal (a record all the same).
      if (user) assert.equal(response.statusCode, UPSTREAM_STATUSES[i % 5], path);
      else assert.ok(response.statusCode === 401 || response.statusCode === 302, `${path}: ${response.statusCode}`);
      const requestId = String(response.headers['x-request-id']);
      assert.match(requestId, /^[0-9a-f]{16}$/, 'the gateway names every answer: 8 random bytes in hex (tracing is off)');
      sent.push({ path, method, status_code: response.statusCode, user_id: user, request_id: requestId });
    }
    // Records are shipped in batches off the request path.
    await eventually(`${sent.length} records stored`, async () => (await logs('')).json.total >= sent.length);
    all = (await logs('?limit=1000')).json.logs;
  });
  after(async () => {
    await deployment?.close();
    await upstream?.close();
  });

  it('lists every proxied request once, newest first, in the interface.md §2.2 shape', async () => {
    const response = await logs('');
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.equal(response.json.total, sent.length);
    assert.equal(response.json.partial, undefined);
    assert.deepEqual(shown(response), [...sent].reverse());
    for (const record of response.json.logs as LogRecord[]) {
      assert.deepEqual(Object.keys(record).sort(), RECORD_KEYS);
      assert.ok(Number.isSafeInteger(record.id), String(record.id));
      assert.equal(record.service_id, serviceId);
      assert.ok(Number.isInteger(record.response_time_ms) && record.response_time_ms >= 0);
      assert.equal(record.ip_address, '127.0.0.1');
      assert.equal(record.host, null, 'a host-less service is reached by path alone');
      assert.match(record.timestamp, ISO);
    }
    const ids = all.map((record) => record.id);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');
    const times = all.map((record) => Date.parse(record.timestamp));
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
  });

  it('pages with limit and offset; the total stays the count of all matches', async () => {
    const page = await logs('?limit=5&offset=3');
    assert.equal(page.status, 200);
    assert.equal(page.json.total, sent.length);
    assert.deepEqual(page.json.logs, all.slice(3, 8));
    const last = await logs(`?limit=10&offset=${sent.length - 2}`);
    assert.deepEqual(last.json.logs, all.slice(-2));
    const past = await logs(`?offset=${sent.length}`);
    assert.deepEqual({ logs: past.json.logs, total: past.json.total }, { logs: [], total: sent.length });
    // Every record once across pages of 7.
    const paged: LogRecord[] = [];
    for (let offset = 0; offset < sent.length; offset += 7) paged.push(...(await logs(`?limit=7&offset=${offset}`)).json.logs);
    assert.deepEqual(paged, all);
  });

  it('filters by status class, method, path, user and time range, alone and together', async () => {
    const classOf = (record: LogRecord) => Math.floor(record.status_code / 100);
    for (const status of ['2xx', '3xx', '4xx', '5xx']) {
      const response = await logs(`?status=${status}`);
      const want = expected((record) => classOf(record) === Number(status[0]));
      assert.deepEqual(shown(response), want, status);
      assert.equal(response.json.total, want.length, status);
    }
    assert.ok(expected((record) => classOf(record) === 4).some((record) => record.user_id === null), 'the refusals of anonymous callers are logged');
    assert.deepEqual(shown(await logs('?method=post')), expected((record) => record.method === 'POST'), 'the method in any case');
    assert.deepEqual(shown(await logs('?path=item-1')), expected((record) => record.path.includes('item-1')));
    assert.deepEqual(shown(await logs('?path=%3Fpage%3D2')), expected((record) => record.path.includes('?page=2')), 'the query is part of the path');
    assert.deepEqual(shown(await logs('?path=ITEM')), [], 'case-sensitive');
    assert.deepEqual(shown(await logs('?user=user-b')), expected((record) => record.user_id === 'user-b'));
    assert.deepEqual(shown(await logs('?user=user')), [], 'the subject exactly');
    for (const record of [all[0]!, all[11]!]) {
      const byId = await logs(`?requestId=${record.request_id}`);
      assert.deepEqual([shown(byId), byId.json.total], [[sentOf(record)], 1], 'the request a user quotes');
    }
    assert.deepEqual(shown(await logs(`?requestId=${all[0]!.request_id.slice(0, 8)}`)), [], 'the id exactly');

    // A time range between two records' times: from inclusive, to exclusive.
    const from = all[15]!.timestamp;
    const to = all[4]!.timestamp;
    const inRange = (record: LogRecord) => record.timestamp >= from && record.timestamp < to;
    const ranged = await logs(`?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    assert.deepEqual(shown(ranged), expected(inRange));
    assert.equal(ranged.json.total, expected(inRange).length);
    const today = all[0]!.timestamp.slice(0, 10);
    assert.equal((await logs(`?from=${today}`)).json.total, all.filter((record) => record.timestamp >= today).length, 'a bare date is its midnight UTC');

    const together = (record: LogRecord) => record.method === 'GET' && record.user_id === 'user-a' && classOf(record) === 2;
    const combined = await logs('?method=GET&user=user-a&status=2xx&limit=2&offset=1');
    assert.deepEqual(shown(combined), expected(together).slice(1, 3));
    assert.equal(combined.json.total, expected(together).length);
    assert.equal((await logs('?status=&method=&path=&user=&from=&to=')).json.total, sent.length, 'empty parameters do not filter');
  });

  it('400 naming each bad parameter', async () => {
    const cases: [string, string[]][] = [
      ['?status=6xx', ['status']],
      ['?method=GE%20T', ['method']],
      ['?from=yesterday', ['from']],
      ['?from=2025-03-01T12:00:00', ['from']],
      ['?from=2025-03-02&to=2025-03-01', ['to']],
      [`?path=${'x'.repeat(2049)}`, ['path']],
      ['?limit=0', ['limit']],
      ['?limit=1001', ['limit']],
      ['?offset=-1', ['offset']],
      ['?status=200&limit=abc&offset=1.5', ['limit', 'offset', 'status']],
      ['?requestId=a%20b', ['requestId']],
    ];
    for (const [query, fields] of cases) {
      const response = await logs(query);
      assert.equal(response.status, 400, query);
      assert.deepEqual(Object.keys(response.json.fields).sort(), fields, query);
      assert.equal(typeof response.json.error, 'string');
    }
  });

  it('a read API token lists the same; no credentials 401, a non-admin 403', async () => {
    const byToken = await call('GET', `/api/services/${serviceId}/logs?limit=1000`, { authorization: `Bearer ${token}` });
    assert.equal(byToken.status, 200, byToken.text);
    assert.deepEqual(byToken.json.logs, all);
    assert.equal((await call('GET', `/api/services/${serviceId}/logs`)).status, 401);
    const member = await deployment.signIn({ sub: 'member', name: 'Max', email: 'max@example.com', isAdmin: false });
    assert.equal((await call('GET', `/api/services/${serviceId}/logs`, { as: member })).status, 403);
  });

  it('the console’s service page shows the records, newest first, and its filters', async () => {
    const page = await call('GET', `/dashboard/services/${serviceId}`, { as: admin });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const rows = tableRows(page.text);
    assert.equal(rows.length, sent.length, 'one row per record (fewer than a page)');
    rows.forEach((row, i) => {
      const record = all[i]!;
      assert.ok(row.includes(`<code>${record.path}</code>`), `row ${i}: ${record.path}`);
      assert.ok(row.includes(`<code>${record.method}</code>`), `row ${i}: ${record.method}`);
      assert.ok(row.includes(`>${record.status_code}</span>`), `row ${i}: ${record.status_code}`);
      assert.ok(row.includes(record.user_id === null ? 'anonymous' : `<code>${record.user_id}</code>`), `row ${i}: ${record.user_id}`);
      assert.ok(row.includes(record.timestamp), `row ${i}: ${record.timestamp}`);
      assert.ok(row.includes(`<summary title="${record.request_id}"><code>${record.request_id}</code></summary>`), `row ${i}: ${record.request_id}`);
    });
    const filtered = await call('GET', `/dashboard/services/${serviceId}?status=5xx&user=user-a`, { as: admin });
    assert.equal(filtered.status, 200);
    const want = expected((record) => Math.floor(record.status_code / 100) === 5 && record.user_id === 'user-a');
    assert.ok(want.length > 0);
    assert.deepEqual(tableRows(filtered.text).map((row) => /<td data-label="Path"[^>]*><code>([^<]*)<\/code>/.exec(row)?.[1]), want.map((record) => record.path));
    const bad = await call('GET', `/dashboard/services/${serviceId}?method=%3F`, { as: admin });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /role="alert">method must be an HTTP method/);
  });
}

/** A record's fields that say which request it is (a {@link LogRecord}'s, or an API record's). */
function sentOf({ path, method, status_code, user_id, request_id }: Sent): Sent {
  return { path, method, status_code, user_id, request_id };
}

/** The status and `X-Request-Id` of an answer. */
type Answer = { status: number; requestId: string };

/** The answer to a GET with `cookie`. */
async function answerTo(url: string, cookie: string): Promise<Answer> {
  const response = await request(url, { headers: { cookie } });
  await response.body.dump();
  return { status: response.statusCode, requestId: String(response.headers['x-request-id']) };
}

/** The rows of the console's access-log table, in order. */
function tableRows(html: string): string[] {
  const body = /<table class="responsive log-table">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return body.match(/<tr>[\s\S]*?<\/tr>/g) ?? [];
}

describe('access-log API and console, embedded', () => {
  checkAccessLogApi(async () => {
    const gw = await startTestGateway();
    return {
      proxyUrl: gw.origin,
      adminUrl: gw.adminUrl,
      signIn: (user) => signIn(gw, user),
      close: () => gw.close(),
    };
  });
});

describe('access-log API and console, split (admin process, two proxies, Redis)', () => {
  checkAccessLogApi(async () => {
    const split = await startSplitGateway();
    return {
      proxyUrl: split.proxies[0].url,
      adminUrl: split.adminUrl,
      signIn: (user) => split.signIn(user),
      close: () => split.close(),
    };
  });
});
