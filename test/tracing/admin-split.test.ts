/**
 * The admin process's request ids and spans in split mode (README "Tracing", design.md §3.10):
 * Redis, one admin process and two proxy processes, each exporting to a real OTLP/HTTP receiver. A
 * sign-in's callback, handed off by a proxy, continues the proxy's trace in the admin process (its
 * server span under the proxy's hand-off span, the provider's requests under it) and keeps the
 * proxy's request id, which the error page and the admin's log line name too; a trusted peer on
 * the admin port keeps its own id and trace; the admin's /metrics counts its exported spans. The
 * embedded gateway: admin-embedded.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { OtlpTraceReceiver } from '../support/otlp-trace-receiver.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { assertNoSecretInSpans, callbackSpans, signInThroughProvider } from './admin-sign-in-spans.js';

describe('the admin process traced in split mode', () => {
  let receiver: OtlpTraceReceiver;
  let split: SplitGateway;
  const secrets: string[] = ['split-secret'];

  before(async () => {
    receiver = await OtlpTraceReceiver.start();
    split = await startSplitGateway(
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_SAMPLER: 'always_on' },
      { responseModes: 'query-only' },
    );
  });

  after(async () => {
    await split?.close();
    await receiver?.close();
  });

  it("continues a handed-off sign-in's trace: the admin's server span under the proxy's hand-off, the provider's requests under it", async () => {
    const signed = await signInThroughProvider(split.proxies[0].url, 'user@example.com', 'user-password');
    secrets.push(...signed.secrets);
    const { callback } = await callbackSpans(receiver, split.idp.issuer, 'gatehouse-admin');
    const trace = await receiver.waitForTrace(callback.traceId, "the proxy's spans", (spans) =>
      spans.some((span) => span.spanId === callback.parentSpanId) && spans.some((span) => span.parentSpanId === undefined));
    const handOff = trace.find((span) => span.spanId === callback.parentSpanId)!;
    assert.deepEqual([handOff.kind, handOff.resource['service.name']], ['CLIENT', 'gatehouse-proxy']);
    const root = trace.find((span) => span.parentSpanId === undefined)!;
    assert.deepEqual([root.kind, root.resource['service.name']], ['SERVER', 'gatehouse-proxy'], 'the trace began at the proxy');
    assert.equal(callback.attributes['gatehouse.request_id'], root.attributes['gatehouse.request_id'], "the proxy's request id, kept");
    assert.equal(callback.attributes['client.address'], '127.0.0.1', "the client's address, as the proxy forwarded it");
  });

  it("keeps a handed-off request's id: the answer, the error page and the admin's log line name the proxy's", async () => {
    const response = await request(`${split.proxies[1].url}/auth/callback?state=never-issued`, { headers: { accept: 'text/html', 'x-request-id': 'chosen-by-caller' } });
    const page = await response.body.text();
    assert.equal(response.statusCode, 400);
    const requestId = String(response.headers['x-request-id']);
    assert.match(requestId, /^[0-9a-f]{32}$/, "the proxy's id for a sampled request: its trace id");
    assert.ok(page.includes(`<code>${requestId}</code>`), page);
    await eventually("the admin's log line", () => split.admin.output().split('\n').some((line) => line.includes('"login failed"') && line.includes(`"requestId":"${requestId}"`)));
    const [span] = await receiver.waitForTrace(requestId, "the admin's server span", (spans) => spans.some((s) => s.resource['service.name'] === 'gatehouse-admin'))
      .then((spans) => spans.filter((s) => s.resource['service.name'] === 'gatehouse-admin' && s.kind === 'SERVER'));
    assert.deepEqual([span!.name, span!.attributes['gatehouse.request_id'], span!.attributes['http.response.status_code']], ['GET /auth/callback', requestId, 400]);
  });

  it("lets a trusted peer on the admin port (loopback) keep its request id and continue its trace", async () => {
    const [callerTrace, callerSpan] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const response = await request(`${split.adminUrl}/api/services`, {
      headers: { accept: 'application/json', 'x-request-id': 'ops-ticket-42', traceparent: `00-${callerTrace}-${callerSpan}-01` },
    });
    await response.body.dump();
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['x-request-id'], 'ops-ticket-42');
    const [span] = await receiver.waitForTrace(callerTrace, 'the server span', (spans) => spans.length > 0);
    assert.deepEqual([span!.name, span!.kind, span!.parentSpanId, span!.resource['service.name']], ['GET /api/services', 'SERVER', callerSpan, 'gatehouse-admin']);
    assert.equal(span!.attributes['gatehouse.request_id'], 'ops-ticket-42');
  });

  it("counts the admin process's exported spans on its /metrics", async () => {
    await eventually('exported spans counted', async () => {
      const text = await (await request(`${split.adminUrl}/metrics`)).body.text();
      return /^gatehouse_trace_spans_exported_total [1-9]/m.test(text);
    }, 20_000, 200);
  });

  it('exports no attribute holding a cookie, the code, the state or the client secret', () => {
    assertNoSecretInSpans(receiver, secrets);
  });
});
