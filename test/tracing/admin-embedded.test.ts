/**
 * The admin plane's request ids and spans in the embedded gateway (README "Tracing", design.md
 * §3.10), against a real OTLP/HTTP receiver and the real oidc-provider: a sign-in's requests to the
 * provider hang under the trace the data plane began (one server span per request), a refresh
 * re-validation and an access-log store are traces of their own, an admin-port request gets an id
 * and a server span (an untrusted caller's id and traceparent are not taken), error pages and log
 * lines name the request's id, and no exported attribute holds a secret. Split mode:
 * admin-split.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { TokenCipher } from '../../shared/identity/token-encryption.js';
import { createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { CLIENT_SECRET, startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { OtlpTraceReceiver } from '../support/otlp-trace-receiver.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';
import { assertNoSecretInSpans, callbackSpans, signInThroughProvider } from './admin-sign-in-spans.js';

const ENCRYPTION_KEY = randomBytes(32);
const HEX_32 = /^[0-9a-f]{32}$/;

describe('the admin plane traced in the embedded gateway', () => {
  let receiver: OtlpTraceReceiver;
  let env: GatewayWithProvider;
  let upstream: EchoUpstream;
  /** The gateway's log lines (warn and up), parsed. */
  const logged: Array<Record<string, unknown>> = [];
  /** Every secret the tests handled, for the scan at the end. */
  const secrets: string[] = [CLIENT_SECRET];

  before(async () => {
    receiver = await OtlpTraceReceiver.start();
    upstream = await startEchoUpstream();
    env = await startGatewayWithProvider(
      {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_TRACES_SAMPLER: 'always_on',
        OIDC_SCOPES: 'openid profile email offline_access',
        SESSION_REVALIDATE: '1s',
        SESSION_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
        LOG_LEVEL: 'warn',
      },
      { refreshTokens: true, responseModes: 'query-only' },
      '127.0.0.1',
      (line) => logged.push(JSON.parse(line) as Record<string, unknown>),
    );
    const admin = await signIn(env.gw);
    await createService(env.gw.origin, admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
  });

  after(async () => {
    await env?.close();
    await upstream?.close();
    await receiver?.close();
  });

  /** The tokens the gateway keeps for `sub`'s sessions: ID tokens and (unsealed) refresh tokens. */
  async function storedTokens(sub: string): Promise<string[]> {
    const sessions = await env.gw.gateway.sessions.find({ sub });
    return sessions.flatMap((session) => [session.idToken ?? '', session.refreshToken ? new TokenCipher([ENCRYPTION_KEY]).decrypt(session.refreshToken, session.handle) : '']).filter(Boolean);
  }

  it("records a sign-in's token and JWKS requests under the data plane's server span: one server span for the request", async () => {
    const signed = await signInThroughProvider(env.gw.origin, 'user@example.com', 'user-password');
    secrets.push(...signed.secrets, ...(await storedTokens('demo-user')));
    const { callback, trace } = await callbackSpans(receiver, env.idp.issuer, 'gatehouse');
    assert.equal(callback.parentSpanId, undefined, "the data plane's server span, the trace's root");
    assert.deepEqual(trace.filter((span) => span.kind === 'SERVER').map((span) => span.spanId), [callback.spanId]);
    assert.equal(callback.attributes['gatehouse.request_id'], callback.traceId, "a sampled request's id is its trace id");
  });

  it('makes a refresh re-validation a trace of its own, its token request under it', async () => {
    const signed = await signInThroughProvider(env.gw.origin, 'admin@example.com', 'admin-password');
    secrets.push(...signed.secrets);
    const cookie = `gw_session=${signed.jar.get('gw_session', env.gw.origin)}`;
    // SESSION_REVALIDATE is 1 s: a request once it has passed asks for the refresh.
    await eventually('a refresh span', async () => {
      const response = await request(`${env.gw.origin}/app/`, { headers: { cookie } });
      await response.body.dump();
      assert.equal(response.statusCode, 200);
      return receiver.spans.some((span) => span.name === 'session refresh');
    }, 30_000, 300);
    secrets.push(...(await storedTokens('demo-admin')));
    const refresh = receiver.spans.find((span) => span.name === 'session refresh')!;
    assert.equal(refresh.kind, 'INTERNAL');
    assert.equal(refresh.parentSpanId, undefined);
    assert.equal(refresh.attributes['gatehouse.session.refresh'], 'refreshed');
    const trace = await receiver.waitForTrace(refresh.traceId, 'the refresh request', (spans) => spans.some((span) => span.parentSpanId === refresh.spanId));
    const call = trace.find((span) => span.parentSpanId === refresh.spanId)!;
    assert.deepEqual([call.kind, call.name, call.attributes['http.response.status_code']], ['CLIENT', 'POST', 200]);
    assert.match(String(call.attributes['url.full']), /^http:\/\/127\.0\.0\.1:\d+\/token$/);
  });

  it('records an access-log batch stored as a span with its record count', async () => {
    const response = await request(`${env.gw.origin}/app/`, { headers: { accept: 'application/json' } });
    await response.body.dump();
    assert.equal(response.statusCode, 401);
    const stored = await receiver.waitFor('an access-log store span', (r) => r.spans.find((span) => span.name === 'access-log store'));
    assert.deepEqual([stored.kind, stored.parentSpanId, stored.resource['service.name']], ['INTERNAL', undefined, 'gatehouse']);
    assert.ok(Number(stored.attributes['gatehouse.access_log.records']) >= 1);
  });

  it("gives an admin-port request its own id and server span; an untrusted caller's id and traceparent are not taken", async () => {
    const [callerTrace, callerSpan] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const response = await request(`${env.gw.adminUrl}/api/services`, {
      headers: { accept: 'application/json', 'x-request-id': 'chosen-by-caller', traceparent: `00-${callerTrace}-${callerSpan}-01` },
    });
    await response.body.dump();
    assert.equal(response.statusCode, 401);
    const requestId = String(response.headers['x-request-id']);
    assert.match(requestId, HEX_32, 'a sampled request: its trace id');
    const [span] = await receiver.waitForTrace(requestId, 'the server span', (spans) => spans.length > 0);
    assert.deepEqual([span!.name, span!.kind, span!.parentSpanId], ['GET /api/services', 'SERVER', undefined]);
    assert.deepEqual(span!.links.map((link) => [link.traceId, link.spanId]), [[callerTrace, callerSpan]]);
    assert.deepEqual([span!.attributes['gatehouse.request_id'], span!.attributes['http.response.status_code'], span!.attributes['http.route']], [requestId, 401, '/api/services']);
  });

  it("prints the request's id on an error page and in the log line of a failed sign-in, on either port", async () => {
    for (const origin of [env.gw.origin, env.gw.adminUrl]) {
      const response = await request(`${origin}/auth/callback?state=never-issued`, { headers: { accept: 'text/html' } });
      const page = await response.body.text();
      assert.equal(response.statusCode, 400);
      const requestId = String(response.headers['x-request-id']);
      assert.match(requestId, HEX_32);
      assert.ok(page.includes(`<code>${requestId}</code>`), page);
      await eventually('the log line', () => logged.some((line) => line.msg === 'login failed' && line.requestId === requestId));
    }
  });

  it('exports no attribute holding a cookie, the code, the state or a token', async () => {
    assert.ok(secrets.length > 6, `secrets gathered: ${secrets.length}`);
    assertNoSecretInSpans(receiver, secrets);
  });
});

describe('the admin plane untraced', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
  });

  after(async () => {
    await gw?.close();
  });

  it('gives every admin-port answer a fresh id, whatever an untrusted caller sends', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const response = await request(`${gw.adminUrl}/api/services`, { headers: { accept: 'application/json', 'x-request-id': 'chosen-by-caller' } });
      await response.body.dump();
      assert.equal(response.statusCode, 401);
      ids.add(String(response.headers['x-request-id']));
    }
    assert.equal(ids.size, 3);
    for (const id of ids) assert.match(id, /^[0-9a-f]{16}$/);
  });
});
