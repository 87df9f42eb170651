/**
 * The attack on the client address (design.md §5 "client IP"), against a running gateway with
 * `TRUST_PROXY=loopback`, embedded and split: this test connects from 127.0.0.1, a trusted proxy,
 * and says in `X-Forwarded-For` or `Forwarded` whatever an attacker behind a careless proxy could.
 * A value that is not an IP address is ignored: the access log API shows the connecting address,
 * the upstream is told nothing more, and the rate limit counts it against the connecting address,
 * so changing the junk from one request to the next does not make a new client. A valid address,
 * with or without port or brackets, is the client, as a bare IP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import type { ApiCall } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import type { SignedIn } from '../support/sessions.js';
import { headerValues, type EchoUpstream } from '../support/upstream.js';

const CONNECTING = '127.0.0.1';

/** Forwarded values that name no IP address; each must leave the client at the connecting address. */
const JUNK: ReadonlyArray<Record<string, string>> = [
  { 'x-forwarded-for': '"><img src=x onerror=alert(1)>' },
  { 'x-forwarded-for': 'unknown' },
  { 'x-forwarded-for': '_hidden' },
  { 'x-forwarded-for': '[203.0.113.9]' },
  { 'x-forwarded-for': '203.0.113.9:http' },
  { 'x-forwarded-for': '203.0.113.9, unknown' },
  { forwarded: 'for=_hidden' },
  { forwarded: 'for=unknown' },
  { forwarded: 'for="<script>alert(1)</script>"' },
  { forwarded: 'for=' },
  { forwarded: 'proto=https' },
  { forwarded: 'for="[2001:db8::1]:443' },
];

/** Forwarded values that name one: the client address each gives, and the X-Forwarded-For the upstream gets. */
const VALID: ReadonlyArray<readonly [Record<string, string>, string, string]> = [
  [{ 'x-forwarded-for': '203.0.113.10' }, '203.0.113.10', '203.0.113.10, 127.0.0.1'],
  [{ 'x-forwarded-for': '203.0.113.11:5678' }, '203.0.113.11', '203.0.113.11, 127.0.0.1'],
  [{ 'x-forwarded-for': '[2001:db8::12]:443' }, '2001:db8::12', '2001:db8::12, 127.0.0.1'],
  [{ 'x-forwarded-for': '2001:db8::13' }, '2001:db8::13', '2001:db8::13, 127.0.0.1'],
  [{ 'x-forwarded-for': '"><img src=x>, 203.0.113.14' }, '203.0.113.14', '203.0.113.14, 127.0.0.1'],
  [{ forwarded: 'for="[2001:db8::15]:443"' }, '2001:db8::15', '2001:db8::15, 127.0.0.1'],
  [{ forwarded: 'for=203.0.113.16;proto=https' }, '203.0.113.16', '203.0.113.16, 127.0.0.1'],
];

const SETTINGS = { TRUST_PROXY: 'loopback', RATE_LIMIT_GENERAL: `${JUNK.length}/15m` };

/** A record as the access-log API lists it. */
interface LogRecord {
  path: string;
  ip_address: string;
  status_code: number;
}

/** What the checks need of a running gateway. */
interface Deployment {
  /** Where the proxied requests go. */
  proxyUrl: string;
  call: ApiCall;
  admin: SignedIn;
  upstream: EchoUpstream;
  serviceId: string;
}

async function statusFrom(url: string, headers: Record<string, string>): Promise<number> {
  const response = await request(url, { headers });
  await response.body.dump();
  return response.statusCode;
}

/** The attack and its checks, once per topology. */
async function junkFallsBackToTheConnectingAddress(d: Deployment): Promise<void> {
  const forms = [...JUNK.map((headers) => [headers, CONNECTING, CONNECTING] as const), ...VALID];
  for (const [i, [headers]] of forms.entries()) {
    assert.equal(await statusFrom(`${d.proxyUrl}/echo/form-${i}`, headers), 200, JSON.stringify(headers));
  }
  // Every junk value was counted against 127.0.0.1, which is now at its limit whatever it says.
  assert.equal(await statusFrom(`${d.proxyUrl}/echo/one-more`, { 'x-forwarded-for': '_yet-another' }), 429);
  assert.equal(await statusFrom(`${d.proxyUrl}/echo/one-more`, {}), 429);
  assert.equal(await statusFrom(`${d.proxyUrl}/echo/one-more`, { forwarded: 'for=_fresh' }), 429);
  assert.equal(await statusFrom(`${d.proxyUrl}/echo/one-more`, { 'x-forwarded-for': '203.0.113.99' }), 200, 'another address has its own budget');

  const logged = new Map<string, LogRecord>();
  await eventually('every form in the access log', async () => {
    const page = await d.call('GET', `/api/services/${d.serviceId}/logs?limit=1000`, { as: d.admin });
    for (const record of page.json.logs as LogRecord[]) logged.set(record.path, record);
    return forms.every((_, i) => logged.has(`/echo/form-${i}`));
  });
  for (const [i, [headers, client, forwardedFor]] of forms.entries()) {
    const what = JSON.stringify(headers);
    assert.equal(logged.get(`/echo/form-${i}`)!.ip_address, client, what);
    const received = d.upstream.requests.find((echoed) => echoed.url === `/form-${i}`)!;
    assert.deepEqual(headerValues(received, 'x-forwarded-for'), [forwardedFor], what);
    assert.deepEqual(headerValues(received, 'forwarded'), [], what);
  }
}

describe('forwarded client address, embedded gateway', () => {
  const env = useAdminSession({ upstream: true, env: SETTINGS });

  it('ignores every non-IP form (the connecting address is logged, forwarded and rate limited) and reads each valid form as a bare IP', async () => {
    const serviceId = await env.createService({ name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
    await junkFallsBackToTheConnectingAddress({ proxyUrl: env.publicUrl, call: env.call, admin: env.admin, upstream: env.upstream, serviceId });
  });
});

describe('forwarded client address, split topology', () => {
  const env = useAdminSession({ topology: 'split', upstream: true, env: SETTINGS });

  it('ignores every non-IP form (the connecting address is logged, forwarded and rate limited) and reads each valid form as a bare IP', async () => {
    const serviceId = await env.createService({ name: 'Echo', path: '/echo', targetUrl: env.upstream.origin, requireAuth: false });
    const proxyUrl = env.split.proxies[0].url;
    // Asked from an address of its own, so the wait costs the connecting address nothing.
    await eventually('the route on the proxy', async () => (await statusFrom(`${proxyUrl}/echo/`, { 'x-forwarded-for': '198.51.100.200' })) === 200);
    await junkFallsBackToTheConnectingAddress({ proxyUrl, call: env.call, admin: env.admin, upstream: env.upstream, serviceId });
  });
});
