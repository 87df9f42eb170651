/**
 * design.md §4.5 in split mode: a proxy process hands the public origin's gateway-owned paths to the
 * admin process, which must answer them as the public origin (no console, public sign-in), while
 * the admin port itself is ADMIN_URL's origin.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';

const ADMIN_URL = 'http://admin.gateway.test';
let split: SplitGateway;

before(async () => {
  split = await startSplitGateway({ ADMIN_URL });
});
after(() => split?.close());

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, { headers });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

test('through a proxy: no admin API or console; sign-in comes back to the public origin', async () => {
  const admin = await split.signIn();
  const proxy = split.proxies[0].url;
  const api = await get(`${proxy}/api/services`, { cookie: admin.cookie });
  assert.equal(api.status, 404);
  assert.equal(api.text, '{"error":"Service not found"}');
  const page = await get(`${proxy}/dashboard`, { accept: 'text/html' });
  assert.equal(page.status, 302);
  assert.equal(page.headers.location, `${ADMIN_URL}/dashboard`);
  const login = await get(`${proxy}/auth/login`);
  assert.equal(new URL(String(login.headers.location)).searchParams.get('redirect_uri'), `${split.env.PUBLIC_URL}/auth/callback`);
  assert.match(String(login.headers['set-cookie']), /^gw_oidc=/);
});

test('on the admin port: ADMIN_URL\'s origin, with its own callback and cookie', async () => {
  const login = await get(`${split.adminUrl}/auth/login`);
  assert.equal(new URL(String(login.headers.location)).searchParams.get('redirect_uri'), `${ADMIN_URL}/auth/callback`);
  assert.match(String(login.headers['set-cookie']), /^gw_admin_oidc=/);
  const admin = await split.signIn();
  assert.equal((await get(`${split.adminUrl}/api/services`, { cookie: admin.cookie })).status, 401, 'a public-origin session does not open the admin API');
});
