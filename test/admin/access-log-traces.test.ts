/**
 * A request's id and trace from the answer to the access log and its export (design.md §3.10,
 * §4.11), through the running gateway in embedded and in split mode (two proxies over Redis),
 * every request traced (`OTEL_TRACES_SAMPLER=always_on`, spans to a real trace receiver,
 * test/support/otlp-trace-receiver.ts) and the access log exported over OTLP to a real log
 * receiver (test/support/otlp-receiver.ts): a traced request's record has its `X-Request-Id` (its
 * trace id) as `request_id` and `trace_id`, and as `span_id` the id of the server span the
 * receiver got, checked against the OpenAPI document; the exported log record carries the same as its
 * `traceId`/`spanId` and `gatehouse.request_id`; the target got the same `X-Request-Id`; a trusted
 * proxy's own `X-Request-Id` is kept beside a fresh trace; a gateway error (503, the target down)
 * is recorded with the id its answer carried.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import { useAdminSession, type EmbeddedAdminSession, type SplitAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { OtlpTraceReceiver } from '../support/otlp-trace-receiver.js';
import { tracingEnv } from '../support/traced-gateway.js';
import { headerValues } from '../support/upstream.js';

const HEX_32 = /^[0-9a-f]{32}$/;
const HEX_16 = /^[0-9a-f]{16}$/;
const TRUSTED_ID = 'lb-01:Root=1-67891233-abcdef012345678912345678';

/** A record as the API lists it (the fields this test reads). */
interface Logged {
  path: string;
  status_code: number;
  request_id: string | null;
  trace_id: string | null;
  span_id: string | null;
}

/** The receivers a gateway of {@link receiversEnv} sends to. */
interface Receivers {
  logs: OtlpReceiver;
  spans: OtlpTraceReceiver;
}

/** Where the console links a traced record (TRACE_UI_URL). */
const TRACE_UI = 'https://traces.example/trace/{traceId}';

/**
 * Settings of a gateway that traces every request (spans to `receivers.spans`), exports its
 * access log (to `receivers.logs`) and trusts its loopback peers' `X-Request-Id`.
 */
function receiversEnv(receivers: Receivers): Record<string, string> {
  return {
    ...tracingEnv(receivers.spans),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receivers.spans.endpoint}/v1/traces`,
    OTEL_EXPORTER_OTLP_ENDPOINT: receivers.logs.endpoint,
    ACCESS_LOG_EXPORT: 'otlp',
    TRUST_PROXY: 'loopback',
    TRACE_UI_URL: TRACE_UI,
  };
}

/** Starts the two receivers into `receivers`; their settings. */
async function startReceivers(receivers: Partial<Receivers>): Promise<Record<string, string>> {
  [receivers.logs, receivers.spans] = await Promise.all([OtlpReceiver.start(), OtlpTraceReceiver.start()]);
  return receiversEnv(receivers as Receivers);
}

/**
 * The checks against a gateway `useAdminSession` starts with {@link receiversEnv}; `proxies` gives
 * the origins of the listeners that proxy (the public one embedded, both proxy processes split).
 */
function checkTracedRecords(env: EmbeddedAdminSession | SplitAdminSession, receivers: Partial<Receivers>, proxies: () => string[]): void {
  let call: ReturnType<typeof checkedApiClient>;
  let echoId: string;
  let downId: string;

  /** `GET <origin><path>` with `headers`; its status and `X-Request-Id`. */
  const get = async (origin: string, path: string, headers: Record<string, string> = {}) => {
    const answer = await request(`${origin}${path}`, { headers });
    await answer.body.dump();
    return { status: answer.statusCode, requestId: String(answer.headers['x-request-id']) };
  };

  /** The service's record of `path`, once stored. */
  const recordOf = async (serviceId: string, path: string): Promise<Logged> => {
    const query = `/api/services/${serviceId}/logs?path=${encodeURIComponent(path)}`;
    await eventually(`the record of ${path}`, async () => (await call('GET', query, { as: env.admin })).json.total >= 1, 20_000);
    const page = await call('GET', query, { as: env.admin });
    assert.equal(page.status, 200, page.text);
    const [record] = (page.json.logs as Logged[]).filter((log) => log.path === path);
    assert.ok(record, path);
    return record;
  };

  it("records a traced request with its X-Request-Id as request and trace id and its server span's id; the export carries the same", async () => {
    call = checkedApiClient(env.apiUrl, new OpenApiChecker((await apiClient(env.apiUrl)('GET', '/api/openapi.json')).json));
    echoId = await env.createService({ name: 'Traced echo', path: '/traced', targetUrl: env.upstream.origin, requireAuth: false });
    downId = await env.createService({ name: 'Traced down', path: '/traced-down', targetUrl: 'http://127.0.0.1:9', requireAuth: false });
    for (const [i, origin] of proxies().entries()) {
      // The last service created is there once all are (a registry snapshot is whole).
      await eventually('the services on every proxy', async () => (await get(origin, '/traced-down/ready')).status === 503);
      const path = `/traced/item-${i}?q=${i}`;
      const answer = await get(origin, path);
      assert.equal(answer.status, 200);
      assert.match(answer.requestId, HEX_32, 'a traced request is known by its trace id');
      const sentOn = env.upstream.requests.find((echo) => echo.url === `/item-${i}?q=${i}`);
      assert.deepEqual(sentOn && headerValues(sentOn, 'x-request-id'), [answer.requestId], 'the target got the same id');

      const record = await recordOf(echoId, path);
      assert.deepEqual([record.request_id, record.trace_id], [answer.requestId, answer.requestId]);
      const spans = await receivers.spans!.waitForTrace(answer.requestId, 'its server span', (all) => all.some((span) => span.kind === 'SERVER'));
      assert.equal(record.span_id, spans.find((span) => span.kind === 'SERVER')!.spanId, "the server span's id");
      await receivers.logs!.until(`the export of ${path}`, (r) => r.withPathPrefix(`/traced/item-${i}`).length === 1, 20_000);
      const [exported] = receivers.logs!.withPathPrefix(`/traced/item-${i}`);
      assert.deepEqual([exported!.traceId, exported!.spanId, exported!.flags], [record.trace_id, record.span_id, 1], 'linked to its trace');
      assert.equal(exported!.attributes['gatehouse.request_id'], answer.requestId);
      const consolePage = await env.call('GET', `/dashboard/services/${echoId}`, { as: env.admin });
      assert.ok(consolePage.text.includes(TRACE_UI.replace('{traceId}', answer.requestId)), "the console links the record to its trace (TRACE_UI_URL)");
    }
  });

  it("keeps a trusted proxy's X-Request-Id, beside a trace of the gateway's own", async () => {
    const [origin] = proxies();
    const answer = await get(origin!, '/traced/from-the-balancer', { 'x-request-id': TRUSTED_ID });
    assert.deepEqual([answer.status, answer.requestId], [200, TRUSTED_ID]);
    const record = await recordOf(echoId, '/traced/from-the-balancer');
    assert.equal(record.request_id, TRUSTED_ID);
    assert.match(String(record.trace_id), HEX_32);
    assert.match(String(record.span_id), HEX_16);
    const byId = await call('GET', `/api/services/${echoId}/logs?requestId=${encodeURIComponent(TRUSTED_ID)}`, { as: env.admin });
    assert.deepEqual(byId.json.logs.map((log: Logged) => log.path), ['/traced/from-the-balancer'], 'found by the id the balancer logged');
  });

  it('records a gateway error with the id its answer carried', async () => {
    const [origin] = proxies();
    const answer = await get(origin!, '/traced-down/x');
    assert.equal(answer.status, 503);
    const record = await recordOf(downId, '/traced-down/x');
    assert.deepEqual([record.status_code, record.request_id, record.trace_id], [503, answer.requestId, answer.requestId]);
  });
}

// The receivers stop after the gateway (after hooks run in the order registered): its exports end first.
describe('request ids and traces in the access log, embedded', () => {
  const receivers: Partial<Receivers> = {};
  const env = useAdminSession({ upstream: true, env: () => startReceivers(receivers) });
  after(() => Promise.all([receivers.logs?.close(), receivers.spans?.close()]));
  checkTracedRecords(env, receivers, () => [env.publicUrl]);
});

describe('request ids and traces in the access log, split', () => {
  const receivers: Partial<Receivers> = {};
  const env = useAdminSession({ topology: 'split', upstream: true, env: () => startReceivers(receivers) });
  after(() => Promise.all([receivers.logs?.close(), receivers.spans?.close()]));
  checkTracedRecords(env, receivers, () => env.split.proxies.map((proxy) => proxy.url));
});
