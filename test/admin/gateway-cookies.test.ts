import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayCookies } from '../../admin/gateway-cookies.js';
import { loadConfig } from '../../shared/config.js';

const cookies = (publicUrl: string) => new GatewayCookies(loadConfig({ PUBLIC_URL: publicUrl }));

test('https: __Host- names, Secure; the transaction cookie is SameSite=None for the form_post', () => {
  const https = cookies('https://gw.example.com');
  assert.equal(https.session('id', 3_600_000), '__Host-gw_session=id; Max-Age=3600; Path=/; HttpOnly; Secure; SameSite=Lax');
  assert.equal(https.transaction(['s']), '__Host-gw_oidc=s; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
});

test('http on a loopback host: plain names; the transaction cookie is still Secure; SameSite=None', () => {
  const local = cookies('http://localhost:8080');
  assert.equal(local.session('id', 3_600_000), 'gw_session=id; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax');
  assert.equal(local.transaction(['s']), 'gw_oidc=s; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
});

test('http elsewhere: no Secure (browsers would drop it), SameSite left to the browser default', () => {
  const plain = cookies('http://gateway.internal');
  assert.equal(plain.transaction(['s']), 'gw_oidc=s; Max-Age=600; Path=/; HttpOnly');
  assert.equal(plain.clearSession(), 'gw_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax');
});

test('the transaction cookie lists pending logins newest first, and is cleared when none is left', () => {
  const local = cookies('http://localhost:8080');
  assert.equal(local.transaction(['newer', 'older']), 'gw_oidc=newer.older; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=None');
  assert.equal(local.transaction([]), local.clearTransaction());
});
