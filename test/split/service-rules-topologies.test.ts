/**
 * design.md §4.18 end to end, embedded and split: rules and `corsPreflight` set through the admin
 * API travel with the registry to the data plane (every proxy process in split mode), which
 * decides on its own: a webhook path public inside a protected service, a deny path, a require
 * rule with its own policy, a CORS preflight; the API answers them back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { headerValues } from '../support/upstream.js';

const rules = [
  { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
  { paths: ['/internal'], action: 'deny' },
  { paths: ['/admin'], action: 'require', access: { groups: ['admins'], emails: [], emailDomains: [], subjects: [] } },
];

/** The status of `method url` with `headers`, its body read and dropped. */
async function statusOf(url: string, method: 'GET' | 'POST' | 'OPTIONS', headers: Record<string, string> = {}): Promise<number> {
  const response = await request(url, { method, headers: { accept: 'application/json', ...headers } });
  await response.body.dump();
  return response.statusCode;
}

for (const topology of ['embedded', 'split'] as const) {
  describe(`rules inside a service (${topology})`, () => {
    const split = topology === 'split' ? useAdminSession({ topology: 'split', upstream: true }) : undefined;
    const env = split ?? useAdminSession({ upstream: true });
    /** The public origins: each proxy process in split mode. */
    const origins = (): string[] => split?.split.proxies.map((proxy) => proxy.url) ?? [env.publicUrl];

    it('set through the API, answered back, and decided by every proxy', async () => {
      const id = await env.createService({ name: 'Hooked', path: '/hooked', targetUrl: env.upstream.origin, requireAuth: true, rules, corsPreflight: 'public' });
      const answered = await request(`${env.apiUrl}/api/services/${id}`, { headers: { cookie: env.admin.cookie } });
      const service = (await answered.body.json()) as { rules: unknown; corsPreflight: string };
      assert.deepEqual([service.rules, service.corsPreflight], [rules, 'public']);
      const staff = await env.signIn({ sub: 'staffer', groups: ['staff'], isAdmin: false });
      const admin = await env.signIn({ sub: 'boss', groups: ['admins'], isAdmin: false });
      for (const origin of origins()) {
        await eventually(`${origin}: the webhook is public`, async () => (await statusOf(`${origin}/hooked/hooks/github`, 'POST')) === 200);
        assert.equal(env.upstream.requests.at(-1)!.url, '/hooks/github');
        assert.equal(await statusOf(`${origin}/hooked/other`, 'GET'), 401);
        assert.equal(await statusOf(`${origin}/hooked/Internal`, 'GET', { cookie: admin.cookie }), 403);
        assert.equal(await statusOf(`${origin}/hooked/admin/x`, 'GET', { cookie: staff.cookie }), 403);
        assert.equal(await statusOf(`${origin}/hooked/admin/x`, 'GET', { cookie: admin.cookie }), 200);
        assert.equal(await statusOf(`${origin}/hooked/other`, 'OPTIONS', { origin: 'https://ui.example', 'access-control-request-method': 'PUT' }), 200);
        assert.equal(await statusOf(`${origin}/hooked/hooks/github`, 'POST', { cookie: staff.cookie }), 200);
        assert.deepEqual(headerValues(env.upstream.requests.at(-1)!, 'x-forwarded-user'), ['staffer'], 'a public path still names a signed-in caller');
      }
    });
  });
}

