/**
 * What the admin tracing tests share (not a test file itself): a sign-in through the real identity
 * provider that keeps the secrets it handled (its code, its state, every cookie), the spans the
 * admin process records for the sign-in's callback, and the scan of every exported attribute for
 * those secrets.
 */
import assert from 'node:assert/strict';
import { request } from 'undici';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import type { OtlpTraceReceiver, ReceivedSpan } from '../support/otlp-trace-receiver.js';

/** A browser's cookie jar that also keeps every URL it was asked cookies for: each URL the sign-in visited. */
class VisitingJar extends CookieJar {
  readonly visited: string[] = [];

  override header(url: string | URL, context?: Parameters<CookieJar['header']>[1]): string {
    this.visited.push(String(url));
    return super.header(url, context);
  }
}

/** A completed sign-in: the jar holding its cookies, and the secrets a span must never hold. */
export interface TracedSignIn {
  jar: CookieJar;
  /** The authorization code and state of the callback, and every cookie value the browser got. */
  secrets: string[];
}

/**
 * Signs `email` in through the provider from `origin`'s `/auth/login`; the provider must answer in
 * the query (`responseModes: 'query-only'`), so the code travels in the callback's URL, where a
 * careless span would record it.
 */
export async function signInThroughProvider(origin: string, email: string, password: string): Promise<TracedSignIn> {
  const jar = new VisitingJar();
  const result = await loginThroughProvider({ loginUrl: `${origin}/auth/login`, email, password, jar });
  assert.equal(result.status, 302, result.body);
  const callback = jar.visited.map((url) => new URL(url)).find((url) => url.pathname === '/auth/callback' && url.searchParams.has('code'));
  assert.ok(callback, `the callback carried the code in its query: ${jar.visited.join(' ')}`);
  const secrets = [callback.searchParams.get('code')!, callback.searchParams.get('state')!, ...jar.all().map((cookie) => cookie.value)];
  return { jar, secrets: secrets.filter((secret) => secret.length >= 8) };
}

/** The spans of a sign-in's callback in the process that served it (see {@link callbackSpans}). */
export interface CallbackSpans {
  /** The request's span where the admin plane served it, named by its route. */
  callback: ReceivedSpan;
  token: ReceivedSpan;
  jwks: ReceivedSpan;
  /** Every span of the callback's trace received. */
  trace: ReceivedSpan[];
}

/**
 * Waits for the callback's span (`GET /auth/callback`, SERVER, exported by `serviceName`) and for
 * the token endpoint's and JWKS's client spans under it, and checks those two against the
 * provider's discovery document (OpenTelemetry HTTP client conventions: `url.full` without query).
 */
export async function callbackSpans(receiver: OtlpTraceReceiver, issuer: string, serviceName: string): Promise<CallbackSpans> {
  const discovery = await request(`${issuer}/.well-known/openid-configuration`);
  const { token_endpoint: tokenEndpoint, jwks_uri: jwksUri } = (await discovery.body.json()) as { token_endpoint: string; jwks_uri: string };
  const callback = await receiver.waitFor('the callback span', (r) => r.spans.find((span) => span.name === 'GET /auth/callback' && span.kind === 'SERVER' && span.resource['service.name'] === serviceName));
  const under = (spans: ReceivedSpan[], url: string) => spans.find((span) => span.parentSpanId === callback.spanId && span.attributes['url.full'] === url);
  const trace = await receiver.waitForTrace(callback.traceId, 'the token and JWKS requests under the callback', (spans) => under(spans, tokenEndpoint) !== undefined && under(spans, jwksUri) !== undefined);
  const token = under(trace, tokenEndpoint)!;
  const jwks = under(trace, jwksUri)!;
  const issuerUrl = new URL(issuer);
  for (const [span, method] of [[token, 'POST'], [jwks, 'GET']] as const) {
    assert.equal(span.kind, 'CLIENT');
    assert.equal(span.name, method);
    assert.equal(span.resource['service.name'], serviceName);
    assert.deepEqual(
      [span.attributes['http.request.method'], span.attributes['server.address'], span.attributes['server.port'], span.attributes['http.response.status_code']],
      [method, issuerUrl.hostname, Number(issuerUrl.port), 200],
    );
  }
  assert.equal(callback.attributes['http.route'], '/auth/callback');
  assert.match(String(callback.attributes['url.query']), /(^|&)code=(&|$)/, 'the query keys only');
  return { callback, token, jwks, trace };
}

/** Asserts that no attribute of any span received (nor of their links and resources) holds one of `secrets`. */
export function assertNoSecretInSpans(receiver: OtlpTraceReceiver, secrets: readonly string[]): void {
  assert.ok(receiver.spans.length > 0);
  for (const span of receiver.spans) {
    const values = JSON.stringify([span.name, span.attributes, span.links, span.resource, span.traceState]);
    for (const secret of secrets) assert.ok(!values.includes(secret), `span ${span.name} holds a secret: ${values}`);
  }
}
