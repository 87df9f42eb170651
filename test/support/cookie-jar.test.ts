/** The browser-like cookie jar of the HTTP-driven tests (test/support/cookie-jar.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CookieJar } from './cookie-jar.js';

const IDP = 'http://127.0.0.1:4000';
const GW = 'http://localhost:8080';

describe('CookieJar', () => {
  test('cookies belong to a host: ports share them, 127.0.0.1 and localhost do not', () => {
    const jar = new CookieJar();
    jar.store('a=1; Path=/', 'http://127.0.0.1:4000/x');
    assert.equal(jar.header('http://127.0.0.1:5000/'), 'a=1');
    assert.equal(jar.header('http://localhost:4000/'), '');
    assert.equal(jar.get('a', 'http://127.0.0.1:4000/'), '1');
    assert.equal(jar.get('a', 'http://localhost:4000/'), undefined);
  });

  test('Path: default path is the directory of the request; matching is by whole segments', () => {
    const jar = new CookieJar();
    jar.store('d=1', 'http://h.test/a/b/c');
    jar.store('p=2; Path=/a', 'http://h.test/');
    assert.equal(jar.header('http://h.test/a/b'), 'd=1; p=2');
    assert.equal(jar.header('http://h.test/a/b/z'), 'd=1; p=2', 'longest path first');
    assert.equal(jar.header('http://h.test/a/bc'), 'p=2');
    assert.equal(jar.header('http://h.test/ab'), '');
  });

  test('same name, domain and path replaces; another path coexists', () => {
    const jar = new CookieJar();
    jar.store(['s=old; Path=/', 's=deep; Path=/auth'], IDP);
    jar.store('s=new; Path=/', IDP);
    assert.equal(jar.header(`${IDP}/auth/x`), 's=deep; s=new');
    assert.equal(jar.all().length, 2);
  });

  test('Max-Age=0, a negative Max-Age and a past Expires delete; Max-Age wins over Expires', () => {
    const jar = new CookieJar();
    jar.store(['a=1; Path=/', 'b=2; Path=/', 'c=3; Path=/', 'd=4; Path=/'], GW);
    jar.store('a=; Path=/; Max-Age=0', GW);
    jar.store('b=; Path=/; Max-Age=-1', GW);
    jar.store('c=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT', GW);
    jar.store('d=5; Path=/; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT', GW);
    assert.equal(jar.header(GW), 'd=5');
  });

  test('a delete must name the same path: a cookie at another path survives', () => {
    const jar = new CookieJar();
    jar.store('t=1; Path=/auth', GW);
    jar.store('t=; Path=/; Max-Age=0', GW);
    assert.equal(jar.get('t', `${GW}/auth/callback`), '1');
  });

  test('Domain: shared with subdomains; refused when it does not cover the host or on an IP', () => {
    const jar = new CookieJar();
    jar.store('wide=1; Domain=.example.com; Path=/', 'https://login.example.com/');
    jar.store('foreign=1; Domain=other.com; Path=/', 'https://login.example.com/');
    jar.store('ip=1; Domain=0.0.1; Path=/', 'http://127.0.0.1:1/');
    assert.equal(jar.header('https://app.example.com/'), 'wide=1');
    assert.equal(jar.header('https://example.com/'), 'wide=1');
    assert.equal(jar.header('https://other.com/'), '');
    assert.equal(jar.header('http://127.0.0.1:1/'), '');
  });

  test('Secure: refused from plain http to a non-loopback host; loopback http counts as secure', () => {
    const jar = new CookieJar();
    jar.store('s=1; Secure; Path=/', 'http://app.test/');
    assert.equal(jar.all().length, 0);
    jar.store('s=2; Secure; Path=/', GW);
    assert.equal(jar.header(GW), 's=2');
    jar.store('t=3; Secure; Path=/', 'https://app.test/');
    assert.equal(jar.header('https://app.test/'), 't=3');
    assert.equal(jar.header('http://app.test/'), '');
  });

  test('SameSite on a cross-site POST (form_post from the IdP): only None cookies go', () => {
    const jar = new CookieJar();
    jar.store(['lax=1; Path=/; SameSite=Lax', 'strict=1; Path=/; SameSite=Strict', 'none=1; Path=/; SameSite=None; Secure', 'plain=1; Path=/'], GW);
    assert.equal(jar.header(`${GW}/auth/callback`, { method: 'POST', initiator: `${IDP}/auth/abc` }), 'none=1');
    assert.equal(
      jar.header(`${GW}/auth/callback`, { method: 'GET', initiator: `${IDP}/auth/abc` }),
      'lax=1; none=1; plain=1',
      'a cross-site GET navigation carries Lax (and default) cookies, not Strict',
    );
    assert.equal(jar.header(`${GW}/`, { method: 'POST', initiator: `${GW}/x` }), 'lax=1; strict=1; none=1; plain=1');
    assert.equal(jar.header(`${GW}/`, { method: 'POST' }), 'lax=1; strict=1; none=1; plain=1', 'no initiator: typed by the user');
  });

  test('same site ignores ports; scheme counts', () => {
    const jar = new CookieJar();
    jar.store('strict=1; Path=/; SameSite=Strict', 'http://127.0.0.1:8080/');
    assert.equal(jar.header('http://127.0.0.1:8080/', { method: 'POST', initiator: 'http://127.0.0.1:4000/' }), 'strict=1');
    assert.equal(jar.header('http://127.0.0.1:8080/', { method: 'GET', initiator: 'https://127.0.0.1:4000/' }), '');
  });

  test('SameSite=None without Secure is refused', () => {
    const jar = new CookieJar();
    jar.store('n=1; Path=/; SameSite=None', GW);
    assert.equal(jar.get('n', GW), undefined);
  });

  test('attributes are case-insensitive and HttpOnly is recorded', () => {
    const jar = new CookieJar();
    jar.store('gw_session=abc; path=/; HTTPONLY; samesite=strict; max-age=3600', GW);
    const [cookie] = jar.all();
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'strict');
    assert.equal(cookie?.path, '/');
    assert.ok(cookie?.expires !== undefined && cookie.expires > Date.now() + 3500_000);
  });
});
