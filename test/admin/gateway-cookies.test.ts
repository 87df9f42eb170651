import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayCookies } from '../../admin/http/gateway-cookies.js';

const cookies = (url: string, kind?: 'admin') => new GatewayCookies(new URL(url), kind);

test('https: __Host- names, Secure; the transaction cookie is SameSite=None for the form_post', () => {
  const https = cookies('https://gw.example.com');
  assert.equal(https.session('id', 3_600_000), '__Host-gw_session=id; Max-Age=3600; Path=/; HttpOnly; Secure; SameSite=Lax');
  assert.equal(https.transaction('k'), '__Host-gw_oidc=k; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
});

test('http on a loopback host: plain names; the transaction cookie is still Secure; SameSite=None', () => {
  const local = cookies('http://localhost:8080');
  assert.equal(local.session('id', 3_600_000), 'gw_session=id; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax');
  assert.equal(local.transaction('k'), 'gw_oidc=k; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
});

test('http elsewhere: no Secure (browsers would drop it), SameSite left to the browser default', () => {
  const plain = cookies('http://gateway.internal');
  assert.equal(plain.transaction('k'), 'gw_oidc=k; Max-Age=600; Path=/; HttpOnly');
  assert.equal(plain.clearSession(), 'gw_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax');
});

test('the admin origin has cookies of its own, so the public origin never holds its session', () => {
  assert.equal(cookies('http://localhost:8081', 'admin').session('id', 1000), 'gw_admin_session=id; Max-Age=1; Path=/; HttpOnly; SameSite=Lax');
  assert.equal(cookies('https://admin.example.com', 'admin').transaction('k'), '__Host-gw_admin_oidc=k; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
});
