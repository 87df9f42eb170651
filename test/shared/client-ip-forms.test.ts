/**
 * The forms a forwarded client address takes (design.md §5 "client IP"): each hop's value as a
 * proxy may write it, read into a bare IP address or refused; the `Forwarded` field's `for=`
 * values (RFC 7239 §4–§6); and the client address and hops a real request resolves to when its
 * peer is a trusted proxy. node:net `isIP` is what "an IP address" means.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import { forwardedForHops, hopAddress, xForwardedForHops } from '../../shared/http/forwarded-address.js';
import { TrustedProxies } from '../../shared/http/trusted-proxies.js';

/** Values that name an IP address, and the bare address each names. */
const ADDRESSES: ReadonlyArray<readonly [string, string]> = [
  ['203.0.113.9', '203.0.113.9'],
  ['203.0.113.9:5678', '203.0.113.9'],
  ['2001:db8::1', '2001:db8::1'],
  ['[2001:db8::1]', '2001:db8::1'],
  ['[2001:db8::1]:443', '2001:db8::1'],
  ['[2001:db8::1]:_obfport', '2001:db8::1'],
  ['::ffff:203.0.113.9', '203.0.113.9'],
  ['[::ffff:203.0.113.9]:80', '203.0.113.9'],
  ['fe80::1%eth0', 'fe80::1%eth0'],
];

/** Values that name none: markup, RFC 7239's `unknown` and obfuscated identifiers, near misses. */
const NOT_ADDRESSES: readonly string[] = [
  '"><img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  'unknown',
  '_hidden',
  '_SEVKISEK',
  '',
  'localhost',
  '203.0.113',
  '203.0.113.256',
  '0x7f.0.0.1',
  '203.0.113.9:',
  '203.0.113.9:65536',
  '203.0.113.9:http',
  '[203.0.113.9]',
  '[203.0.113.9]:80',
  '2001:db8::1]',
  '[2001:db8::1',
  '[2001:db8::1]x',
  '[2001:db8::1]:99999',
  '203.0.113.9 203.0.113.10',
  '[unknown]:80',
];

describe('one hop as a proxy wrote it', () => {
  for (const [value, address] of ADDRESSES) {
    it(`${JSON.stringify(value)} is ${address}`, () => assert.equal(hopAddress(value), address));
  }
  for (const value of NOT_ADDRESSES) {
    it(`${JSON.stringify(value)} names no address`, () => assert.equal(hopAddress(value), undefined));
  }
});

describe('X-Forwarded-For entries', () => {
  it('split on commas and trimmed, empty entries skipped', () => {
    assert.deepEqual(xForwardedForHops(' 198.51.100.1 ,203.0.113.9,, unknown '), ['198.51.100.1', '203.0.113.9', 'unknown']);
    assert.deepEqual(xForwardedForHops(''), []);
  });
});

describe('Forwarded for= values (RFC 7239 §4)', () => {
  const cases: ReadonlyArray<readonly [string, Array<string | undefined>]> = [
    ['for=192.0.2.60;proto=http;by=203.0.113.43', ['192.0.2.60']],
    ['for=192.0.2.43, for=198.51.100.17', ['192.0.2.43', '198.51.100.17']],
    ['For="[2001:db8:cafe::17]:4711"', ['[2001:db8:cafe::17]:4711']],
    ['for=_hidden, for=unknown', ['_hidden', 'unknown']],
    ['proto=https;by=203.0.113.43', [undefined]],
    ['for=192.0.2.60;for=198.51.100.17', [undefined]],
    ['for="a,b;c", for = 192.0.2.1 ', ['a,b;c', '192.0.2.1']],
    ['for="\\"quoted\\""', ['"quoted"']],
    ['for=192.0.2.60,, ;, for=192.0.2.61', ['192.0.2.60', '192.0.2.61']],
    ['for=', ['']],
  ];
  for (const [field, hops] of cases) {
    it(JSON.stringify(field), () => assert.deepEqual(forwardedForHops(field), hops));
  }
  for (const field of ['for="[2001:db8::1]:443', 'for="x"y', 'garbage', 'for=192.0.2.1;=x', '"><img src=x>']) {
    it(`${JSON.stringify(field)} does not parse: one hop naming no address`, () => assert.deepEqual(forwardedForHops(field), [undefined]));
  }
  it('reads a field of many empty elements in linear time', () => {
    const started = performance.now();
    assert.deepEqual(forwardedForHops(`${','.repeat(200_000)}for=192.0.2.1`), ['192.0.2.1']);
    assert.ok(performance.now() - started < 1_000);
  });
});

/** The client address and the hops a request with `headers` resolves to, from a real request over loopback. */
async function resolved(trustProxy: string[], headers: Record<string, string>): Promise<{ client: string; hops: string[] }> {
  const trusted = new TrustedProxies(trustProxy);
  const resolve = clientIpResolver(trusted);
  const server = createServer((req: IncomingMessage, res) => res.end(JSON.stringify({ client: resolve(req), hops: trusted.hops(req) })));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers });
    return (await response.body.json()) as { client: string; hops: string[] };
  } finally {
    server.close();
  }
}

describe('the client address behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  const LOOPBACK = ['loopback'];
  for (const junk of NOT_ADDRESSES) {
    it(`X-Forwarded-For ${JSON.stringify(junk)} is ignored: the connecting address`, async () => {
      assert.deepEqual(await resolved(LOOPBACK, { 'x-forwarded-for': junk }), { client: '127.0.0.1', hops: ['127.0.0.1'] });
    });
  }
  for (const field of ['for=_hidden', 'for=unknown', 'for="_hidden:_port"', 'for="<script>"', 'for=', 'proto=https', 'for="[2001:db8::1]:443']) {
    it(`Forwarded ${JSON.stringify(field)} is ignored: the connecting address`, async () => {
      assert.deepEqual(await resolved(LOOPBACK, { forwarded: field }), { client: '127.0.0.1', hops: ['127.0.0.1'] });
    });
  }
  for (const [value, address] of ADDRESSES) {
    it(`X-Forwarded-For ${JSON.stringify(value)} is ${address}`, async () => {
      assert.deepEqual(await resolved(LOOPBACK, { 'x-forwarded-for': value }), { client: address, hops: [address, '127.0.0.1'] });
    });
  }
  it('Forwarded for="[2001:db8::1]:443" is 2001:db8::1; so is for=2001:db8::1, unquoted', async () => {
    assert.deepEqual(await resolved(LOOPBACK, { forwarded: 'for="[2001:db8::1]:443";proto=https' }), { client: '2001:db8::1', hops: ['2001:db8::1', '127.0.0.1'] });
    assert.equal((await resolved(LOOPBACK, { forwarded: 'for=2001:db8::1' })).client, '2001:db8::1');
    assert.equal((await resolved(LOOPBACK, { forwarded: 'for="203.0.113.9:80"' })).client, '203.0.113.9');
  });
  it('a non-address ends the hops believed: a valid hop beyond it is ignored, one after it is the client', async () => {
    assert.deepEqual(await resolved(LOOPBACK, { 'x-forwarded-for': '203.0.113.9, unknown' }), { client: '127.0.0.1', hops: ['127.0.0.1'] });
    assert.deepEqual(await resolved(LOOPBACK, { 'x-forwarded-for': 'unknown, 203.0.113.9' }), { client: '203.0.113.9', hops: ['203.0.113.9', '127.0.0.1'] });
    assert.deepEqual(await resolved(LOOPBACK, { forwarded: 'for=198.51.100.1, for=_hidden, for=203.0.113.9' }), { client: '203.0.113.9', hops: ['203.0.113.9', '127.0.0.1'] });
  });
  it('a junk hop behind a trusted one: the farthest trusted hop is the client, as when every hop is trusted', async () => {
    const trusted = ['loopback', '10.0.0.0/8'];
    assert.deepEqual(await resolved(trusted, { 'x-forwarded-for': '_hidden, 10.0.0.5' }), { client: '10.0.0.5', hops: ['10.0.0.5', '127.0.0.1'] });
    assert.equal((await resolved(trusted, { 'x-forwarded-for': '203.0.113.9, 10.0.0.5' })).client, '203.0.113.9');
  });
  it('X-Forwarded-For wins over Forwarded; Forwarded is read only without it', async () => {
    assert.equal((await resolved(LOOPBACK, { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=198.51.100.1' })).client, '203.0.113.9');
    assert.equal((await resolved(LOOPBACK, { 'x-forwarded-for': 'unknown', forwarded: 'for=198.51.100.1' })).client, '127.0.0.1');
  });
  it('from a peer that is not trusted, neither field is read', async () => {
    const sent: Array<Record<string, string>> = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-forwarded-for': 'unknown' }];
    for (const headers of sent) {
      assert.deepEqual(await resolved(['10.0.0.0/8'], headers), { client: '127.0.0.1', hops: ['127.0.0.1'] });
      assert.deepEqual(await resolved([], headers), { client: '127.0.0.1', hops: ['127.0.0.1'] });
    }
  });
});
