/**
 * Request ids and traces on the access log's API and console (design.md §3.10, §4.6, §4.11),
 * through the running gateway with records stored as the data plane ships them: each record's
 * `request_id`, `trace_id` and `span_id` (null when absent) in answers checked against the OpenAPI
 * document; the `requestId` filter, exact, and its 400 naming the parameter; the console's table
 * showing the id (cut on one line, whole on hover and when opened) with a Request id filter; and,
 * with TRACE_UI_URL, a traced record's link to its trace (the section as the console renders it,
 * and the variable's checks at start).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { accessLogSection } from '../../admin/console/panels/access-log-section.js';
import type { AccessLogRecord } from '../../admin/access-log/reading/access-log-page.js';
import { batchOf } from '../../shared/backends/access-log-batch.js';
import { loadConfig } from '../../shared/config/config.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { configProblems } from '../support/config-problems.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';
import { sampleService } from '../support/samples.js';

const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const PROXY_ID = '9f86d081884c7d65';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRUSTED_ID = 'lb-01:Root=1-67891233';
const JAEGER = 'https://jaeger.example.com/trace/{traceId}';

let serviceId: string;
let call: ReturnType<typeof checkedApiClient>;

/** Request `n`'s record (path `/ids/<n>`) with `ids`. */
function record(n: number, ids: Pick<AccessLogEntry, 'requestId' | 'traceId' | 'spanId'>): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId,
    userId: null,
    path: `/ids/${n}`,
    method: 'GET',
    statusCode: 200,
    responseTimeMs: n,
    ipAddress: '192.0.2.7',
    timestamp: T0 + n * 1000,
    ...ids,
  };
}

// The records are dated March 2025: keep every day, or the writer would count them expired.
const env = useAdminSession({ env: { ACCESS_LOG_RETENTION_DAYS: '36500' } }, async (env) => {
  call = checkedApiClient(env.apiUrl, new OpenApiChecker((await apiClient(env.apiUrl)('GET', '/api/openapi.json')).json));
  serviceId = (await env.call('POST', '/api/services', { as: env.admin, json: { name: 'Ids', path: '/ids', targetUrl: 'http://127.0.0.1:9' } })).json.id;
  await env.gw.gateway.accessLogWriter.store(
    batchOf([
      record(1, {}),
      record(2, { requestId: PROXY_ID }),
      record(3, { requestId: TRACE_ID, traceId: TRACE_ID, spanId: SPAN_ID }),
      record(4, { requestId: TRUSTED_ID }),
    ]),
  );
});

/** `GET /api/services/:id/logs<query>` as the administrator, checked against the OpenAPI document. */
const logs = (query = '') => call('GET', `/api/services/${serviceId}/logs${query}`, { as: env.admin });
type Ids = Pick<AccessLogRecord, 'path' | 'request_id' | 'trace_id' | 'span_id'>;
const idsOf = (answer: { json: { logs: Ids[] } }) => answer.json.logs.map((log) => [log.path, log.request_id, log.trace_id, log.span_id]);

describe('request ids on the access-log API and console', () => {
  it('lists each record with its request id, and a traced one with its trace and span ids; null where absent', async () => {
    const answer = await logs();
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(idsOf(answer), [
      ['/ids/4', TRUSTED_ID, null, null],
      ['/ids/3', TRACE_ID, TRACE_ID, SPAN_ID],
      ['/ids/2', PROXY_ID, null, null],
      ['/ids/1', null, null, null],
    ]);
  });

  it('filters by requestId exactly; a malformed one is 400 naming the parameter', async () => {
    for (const [id, path] of [[PROXY_ID, '/ids/2'], [TRACE_ID, '/ids/3'], [TRUSTED_ID, '/ids/4']] as const) {
      const answer = await logs(`?requestId=${encodeURIComponent(id)}`);
      assert.deepEqual([answer.status, answer.json.total, answer.json.logs.map((log: Ids) => log.path)], [200, 1, [path]], id);
    }
    const none = await logs(`?requestId=${PROXY_ID.toUpperCase()}`);
    assert.deepEqual([none.status, none.json.total], [200, 0], 'case counts');
    const rule = 'must be a request id: 1 to 128 visible ASCII characters, such as 4bf92f3577b34da6';
    for (const wrong of ['a b', 'x'.repeat(129), 'é']) {
      const answer = await logs(`?requestId=${encodeURIComponent(wrong)}`);
      assert.equal(answer.status, 400, wrong);
      assert.deepEqual(answer.json, { error: `requestId ${rule}`, fields: { requestId: rule } });
    }
  });

  it("shows each record's request id in the console's table, cut on one line and whole when opened, with a Request id filter", async () => {
    const page = await env.call('GET', `/dashboard/services/${serviceId}`, { as: env.admin });
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /<th scope="col">Request<\/th>/);
    for (const id of [PROXY_ID, TRACE_ID]) {
      assert.ok(page.text.includes(`<td data-label="Request"><details class="request-id"><summary title="${id}"><code>${id}</code></summary></details></td>`), id);
    }
    assert.ok(page.text.includes('<summary title="lb-01:Root=1-67891233"><code>lb-01:Root=1-67891233</code></summary>'));
    assert.ok(page.text.includes('<td data-label="Request"><span class="muted" title="Stored before request ids">none</span></td>'));
    assert.doesNotMatch(page.text, /trace-link/, 'no trace viewer configured: no links');
    assert.match(page.text, /<label for="f-request-id">Request id<\/label>/);

    const filtered = await env.call('GET', `/dashboard/services/${serviceId}?requestId=${TRACE_ID}`, { as: env.admin });
    assert.equal(filtered.status, 200);
    assert.match(filtered.text, new RegExp(`<input id="f-request-id" name="requestId" value="${TRACE_ID}"`));
    assert.deepEqual([...filtered.text.matchAll(/<td data-label="Path"[^>]*><code>([^<]*)<\/code>/g)].map((m) => m[1]), ['/ids/3']);
    const wrong = await env.call('GET', `/dashboard/services/${serviceId}?requestId=a%20b`, { as: env.admin });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /requestId must be a request id/);
  });
});

describe('TRACE_UI_URL', () => {
  const traced = { path: '/ids/3', request_id: TRACE_ID, trace_id: TRACE_ID, span_id: SPAN_ID };
  const untraced = { path: '/ids/2', request_id: PROXY_ID, trace_id: null, span_id: null };
  /** The access-log section of a page of the two records above. */
  const section = (traceUiUrl: string | undefined) => {
    const base = { id: 1, service_id: 'svc', user_id: null, method: 'GET', status_code: 200, response_time_ms: 1, ip_address: '192.0.2.7', timestamp: new Date(T0).toISOString(), target: null, host: null, protocol: 'http/1.1' as const, count: 1, path_truncated: false };
    const result = { logs: [{ ...base, ...traced }, { ...base, ...untraced }], total: 2 };
    return accessLogSection({ service: sampleService(1), url: new URL('http://gw/dashboard/services/x'), limit: 50, offset: 0, result, servicesOrigin: '', traceUiUrl }).value;
  };

  it("links a traced record to its trace in the viewer, the trace id in the URL's place; an untraced one has no link", () => {
    const html = section(JAEGER);
    const links = [...html.matchAll(/<a class="trace-link" href="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(links, [`https://jaeger.example.com/trace/${TRACE_ID}`]);
    assert.match(html, new RegExp(`title="Open trace ${TRACE_ID}">trace</a></td>`));
    const grafana = section('https://grafana.example.com/explore?left={"queries":[{"query":"{traceId}"}]}&trace={traceId}');
    assert.ok(grafana.includes(`href="https://grafana.example.com/explore?left={&quot;queries&quot;:[{&quot;query&quot;:&quot;${TRACE_ID}&quot;}]}&amp;trace=${TRACE_ID}"`), 'every {traceId}, escaped in the attribute');
    assert.doesNotMatch(section(undefined), /trace-link/);
  });

  it('is read as written, and refused at start unless an http(s) URL with {traceId}', () => {
    assert.equal(loadConfig({ TRACE_UI_URL: JAEGER }).traceUiUrl, JAEGER, 'the braces kept, not percent-encoded');
    assert.equal(loadConfig({}).traceUiUrl, undefined);
    assert.deepEqual(configProblems({ TRACE_UI_URL: 'https://jaeger.example.com/trace/' }), ['TRACE_UI_URL: must contain {traceId}, where the trace id goes']);
    for (const wrong of ['javascript:alert({traceId})', 'ftp://x/{traceId}', '/trace/{traceId}']) {
      assert.deepEqual(configProblems({ TRACE_UI_URL: wrong }), ['TRACE_UI_URL: must be an http: or https: URL'], wrong);
    }
  });
});
