import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { test } from 'node:test';
import { request } from 'undici';
import { clientIpResolver, rateLimitKey } from '../shared/http/client-ip.js';
import { TrustedProxies } from '../shared/http/trusted-proxies.js';

/** Runs one real request through a server that reports what the resolver says. */
async function resolvedIp(trustProxy: string[], headers: Record<string, string>): Promise<string> {
  const resolve = clientIpResolver(new TrustedProxies(trustProxy));
  const server = createServer((req: IncomingMessage, res) => res.end(resolve(req)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as { port: number };
    const response = await request(`http://127.0.0.1:${port}/`, { headers });
    return await response.body.text();
  } finally {
    server.close();
  }
}

test('X-Forwarded-For is ignored unless the peer is a trusted proxy', async () => {
  assert.equal(await resolvedIp([], { 'x-forwarded-for': '203.0.113.9' }), '127.0.0.1');
  assert.equal(await resolvedIp(['10.0.0.0/8'], { 'x-forwarded-for': '203.0.113.9' }), '127.0.0.1');
  assert.equal(await resolvedIp(['loopback'], { 'x-forwarded-for': '203.0.113.9' }), '203.0.113.9');
});

test('a spoofed chain stops at the first untrusted hop', async () => {
  assert.equal(await resolvedIp(['loopback'], { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }), '203.0.113.9');
});

test('rate-limit keys: IPv4 as is, IPv6 by its /64', () => {
  assert.equal(rateLimitKey('203.0.113.9'), '203.0.113.9');
  assert.equal(rateLimitKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(rateLimitKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(rateLimitKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.notEqual(rateLimitKey('2001:db8:1:3::1'), rateLimitKey('2001:db8:1:2::1'));
});
