/**
 * A disabled service through the running gateway: a page for people, the exact JSON for API
 * clients (design.md §3.4), and an access-log record that names the signed-in user (design.md §3.9).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from './support/admin-session.js';

let serviceId: string;

const env = useAdminSession({ upstream: true }, async (env) => {
  const created = await env.call('POST', '/api/services', {
    as: env.admin,
    json: { name: 'Internal <wiki>', path: '/wiki', targetUrl: env.upstream.origin, requireAuth: true },
  });
  assert.equal(created.status, 201, created.text);
  serviceId = created.json.id;
  assert.equal((await env.call('PATCH', `/api/services/${serviceId}/toggle`, { as: env.admin, json: { enabled: false } })).status, 200);
});

/** GET `target` on the public listener, with `Accept: accept` when given. */
async function get(target: string, accept?: string) {
  const response = await request(`${env.gw.origin}${target}`, { headers: accept === undefined ? {} : { accept } });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

test("a browser gets an HTML 503 page in the gateway's look; an API client the exact JSON", async () => {
  const page = await get('/wiki/page', 'text/html,application/xhtml+xml,*/*;q=0.8');
  assert.equal(page.status, 503);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.match(page.text, /<title>Service disabled · Gatehouse<\/title>/);
  assert.match(page.text, /<a class="brand" href="\/">Gatehouse<\/a>/);
  assert.match(page.text, /The service at <code>\/wiki<\/code> is turned off/);
  assert.doesNotMatch(page.text, /Internal/, "the service's name stays internal");

  for (const accept of ['application/json', undefined]) {
    const api = await get('/wiki/page', accept);
    assert.equal(api.status, 503);
    assert.match(String(api.headers['content-type']), /^application\/json/);
    assert.equal(api.text, '{"error":"Service is disabled"}', `Accept: ${accept}`);
  }
  assert.equal(env.upstream.requests.length, 0);
});

test("a signed-in user's request to a disabled service is logged with their user_id", async () => {
  const user = await env.signIn({ sub: 'disabled-visitor', isAdmin: false });
  const refused = await env.call('GET', '/wiki/while-off?n=1', { as: user });
  assert.equal(refused.status, 503);
  // Records are stored in batches about every 100 ms: read the log until this one is there.
  let record: { user_id: string | null; status_code: number } | undefined;
  while (record === undefined) {
    const logs = await env.call('GET', `/api/services/${serviceId}/logs?path=${encodeURIComponent('/wiki/while-off?n=1')}`, { as: env.admin });
    assert.equal(logs.status, 200, logs.text);
    record = logs.json.logs[0];
  }
  assert.equal(record.user_id, 'disabled-visitor');
  assert.equal(record.status_code, 503);
});
