import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { startTestGateway } from '../support/gateway.js';
import { signIn, type SignedIn } from '../support/sessions.js';

/** design.md §4.6 over HTTP: who may see the console's pages, their CSRF token, and the assets. */

let member: SignedIn;
let serviceId: string;

const env = useAdminSession({ admin: { name: 'Ada Admin' } }, async (env) => {
  member = await env.signIn({ sub: 'member-sub', name: 'Max Member', email: 'max@example.com', isAdmin: false });
  const created = await env.call('POST', '/api/services', {
    as: env.admin,
    json: { name: 'Wiki <script>alert(1)</script>', path: '/wiki', targetUrl: 'http://127.0.0.1:9', description: 'a & b' },
  });
  serviceId = created.json.id;
});

const PAGES = () => ['/dashboard', '/dashboard/audit', '/dashboard/tokens', '/dashboard/services/new', `/dashboard/services/${serviceId}`, `/dashboard/services/${serviceId}/edit`];

/** Every asset URL a page references. */
const assetUrls = (html: string): string[] => [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);

describe('console pages', () => {
  it('anonymous: 302 to the login page, coming back to the page asked for', async () => {
    for (const path of [...PAGES(), '/dashboard/services/x?status=5xx&offset=50']) {
      const response = await env.call('GET', path);
      assert.equal(response.status, 302, path);
      assert.equal(response.headers.location, `/auth/login-page?returnTo=${encodeURIComponent(path)}`);
    }
  });

  it('a signed-in non-admin: a 403 HTML page that says why', async () => {
    for (const path of PAGES()) {
      const response = await env.call('GET', path, { as: member });
      assert.equal(response.status, 403, path);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.match(response.text, /signed in as <strong>Max Member<\/strong> \(max@example\.com\), but this account is not an administrator/);
      assert.match(response.text, /ADMIN_EMAILS/);
    }
  });

  it('an admin: each page with the CSRF token in the meta tag and in every form that changes something', async () => {
    for (const path of PAGES()) {
      const response = await env.call('GET', path, { as: env.admin });
      assert.equal(response.status, 200, path);
      assert.match(String(response.headers['content-security-policy']), /default-src 'self'/);
      assert.match(response.text, new RegExp(`<meta name="csrf-token" content="${env.admin.csrfToken}">`), path);
      const forms = response.text.match(/<form[\s\S]*?<\/form>/g) ?? [];
      for (const form of forms.filter((f) => !/method="get"/.test(f))) {
        assert.match(form, new RegExp(`<input type="hidden" name="_csrf" value="${env.admin.csrfToken}">`), `${path}: ${form.slice(0, 80)}`);
      }
      assert.doesNotMatch(response.text, /<script(?![^>]*\bsrc=)[^>]*>/, `${path}: no inline script`);
    }
  });

  it('escapes what admins typed', async () => {
    const overview = await env.call('GET', '/dashboard', { as: env.admin });
    assert.doesNotMatch(overview.text, /<script>alert/);
    assert.match(overview.text, /Wiki &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    const service = await env.call('GET', `/dashboard/services/${serviceId}`, { as: env.admin });
    assert.match(service.text, /a &amp; b/);
  });

  it('shows a service’s access policy (design.md §4.7) on its page and in its form, escaped', async () => {
    const access = { groups: ['ops', '<b>x</b>'], emailDomains: ['example.org'] };
    const created = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'Ops', path: '/ops-policy', targetUrl: 'http://127.0.0.1:9', access } });
    assert.equal(created.status, 201, created.text);
    const page = await env.call('GET', `/dashboard/services/${created.json.id}`, { as: env.admin });
    assert.match(page.text, /<li>Groups: ops, &lt;b&gt;x&lt;\/b&gt;<\/li><li>Email domains: example\.org<\/li>/);
    assert.match(page.text, /Bearer token<\/dt><dd>Not forwarded/);
    const form = await env.call('GET', `/dashboard/services/${created.json.id}/edit`, { as: env.admin });
    assert.match(form.text, /name="access\.groups"[^>]*>ops\n&lt;b&gt;x&lt;\/b&gt;<\/textarea>/);
    assert.match(form.text, /name="access\.emailDomains"[^>]*>example\.org<\/textarea>/);
    assert.match(form.text, /name="access\.emails"[^>]*><\/textarea>/);
    assert.match((await env.call('GET', `/dashboard/services/${serviceId}`, { as: env.admin })).text, /<li>Any signed-in user<\/li>/);
  });

  it('the JSON endpoints under /dashboard stay JSON', async () => {
    for (const path of ['/dashboard/stats', '/dashboard/logs', '/dashboard/traffic']) {
      const response = await env.call('GET', path, { as: env.admin });
      assert.equal(response.status, 200, path);
      assert.match(String(response.headers['content-type']), /^application\/json/, path);
    }
  });

  it('an unknown service or bad paging: a console page with the reason and its status', async () => {
    const missing = await env.call('GET', `/dashboard/services/${randomUUID()}`, { as: env.admin });
    assert.equal(missing.status, 404);
    assert.match(missing.text, /Service not found/);
    const badPage = await env.call('GET', '/dashboard/audit?offset=-1', { as: env.admin });
    assert.equal(badPage.status, 400);
    assert.match(badPage.text, /offset must be an integer of 0 or more/);
  });

  it('a bad log filter: the service page still shows, with the API’s message, status 400', async () => {
    const response = await env.call('GET', `/dashboard/services/${serviceId}?status=9xx`, { as: env.admin });
    assert.equal(response.status, 400);
    assert.match(response.text, /role="alert">status must be one of 2xx, 3xx, 4xx, 5xx</);
    assert.match(response.text, /<form class="filters"/);
  });

  it('links each service at its prefix plus / (a bare prefix is only a redirect there), the service at / at /', async () => {
    const overview = await env.call('GET', '/dashboard', { as: env.admin });
    assert.match(overview.text, /<a href="\/wiki\/" title="Open \/wiki through the gateway">/);
    const page = await env.call('GET', `/dashboard/services/${serviceId}`, { as: env.admin });
    assert.match(page.text, /<dd><a href="\/wiki\/"><code>\/wiki<\/code><\/a><\/dd>/);
    assert.match(page.text, /Open <a href="\/wiki\/"><code>\/wiki<\/code><\/a> through the gateway/, 'the empty access log says where to go');
    const root = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'Root', path: '/', targetUrl: 'http://127.0.0.1:9' } });
    try {
      assert.equal(root.status, 201, root.text);
      assert.match((await env.call('GET', '/dashboard', { as: env.admin })).text, /<a href="\/" title="Open \/ through the gateway">/);
    } finally {
      assert.equal((await env.call('DELETE', `/api/services/${root.json.id}`, { as: env.admin })).status, 204);
    }
  });

  it('/dashboard/ redirects to /dashboard; the home page links the console for admins only', async () => {
    const slash = await env.call('GET', '/dashboard/', { as: env.admin });
    assert.equal(slash.status, 302);
    assert.equal(slash.headers.location, '/dashboard');
    assert.match((await env.call('GET', '/', { as: env.admin })).text, /<a class="button" href="\/dashboard">Console<\/a>/);
    assert.doesNotMatch((await env.call('GET', '/', { as: member })).text, /href="\/dashboard"/);
  });
});

describe('the general rate limit and the console', () => {
  it('counts anonymous and non-admin requests, not an admin’s console (it refreshes every 5 s) nor the assets', async () => {
    const limited = await startTestGateway({ RATE_LIMIT_GENERAL: '3/15m' });
    try {
      const limitedCall = apiClient(limited.origin);
      const limitedAdmin = await signIn(limited);
      const limitedMember = await signIn(limited, { sub: 'member', isAdmin: false });
      const overview = await limitedCall('GET', '/dashboard', { as: limitedAdmin });
      for (let i = 0; i < 10; i++) {
        assert.equal((await limitedCall('GET', '/dashboard', { as: limitedAdmin })).status, 200);
        assert.equal((await limitedCall('GET', '/dashboard/traffic', { as: limitedAdmin })).status, 200);
        for (const url of assetUrls(overview.text)) assert.equal((await limitedCall('GET', url)).status, 200);
      }
      for (let i = 0; i < 3; i++) assert.notEqual((await limitedCall('GET', '/auth/login-page')).status, 429);
      assert.equal((await limitedCall('GET', '/auth/login-page')).status, 429);
      assert.equal((await limitedCall('GET', '/', { as: limitedMember })).status, 429);
    } finally {
      await limited.close();
    }
  });
});

describe('console assets', () => {
  let urls: string[];
  before(async () => {
    urls = assetUrls((await env.call('GET', '/dashboard', { as: env.admin })).text);
  });

  it('are named by their content hash and cached for a year, without a session', async () => {
    assert.ok(urls.length >= 8, urls.join(' '));
    for (const url of urls) {
      assert.match(url, /^\/dashboard\/assets\/[a-z-]+\.[0-9a-f]{10}\.(js|css)$/);
      const response = await env.call('GET', url);
      assert.equal(response.status, 200, url);
      assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(response.headers['content-type']), url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      assert.equal(response.headers.etag, `"${url.split('.').at(-2)}"`);
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
    }
  });

  it('serves uPlot from node_modules, byte for byte, gzipped when asked, 304 on a matching ETag', async () => {
    const url = urls.find((u) => u.includes('/uplot.') && u.endsWith('.js'))!;
    const onDisk = readFileSync(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));
    const plain = await request(env.gw.origin + url);
    assert.deepEqual(Buffer.from(await plain.body.arrayBuffer()), onDisk);
    const gzipped = await request(env.gw.origin + url, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(Buffer.from(await gzipped.body.arrayBuffer())), onDisk);
    const again = await request(env.gw.origin + url, { headers: { 'if-none-match': String(plain.headers.etag) } });
    assert.equal(again.statusCode, 304);
    await again.body.dump();
  });

  it('an unknown or stale name is 404', async () => {
    assert.equal((await env.call('GET', '/dashboard/assets/api.0000000000.js')).status, 404);
    assert.equal((await env.call('GET', '/dashboard/assets/api.js')).status, 404);
  });
});

describe('the audit page names each service as it was when the action happened', () => {
  it('created, renamed, disabled, deleted: each row keeps the name of its moment', async () => {
    const created = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'First name', path: '/history', targetUrl: 'http://127.0.0.1:9' } });
    const id = created.json.id as string;
    assert.equal((await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: { name: 'Second name' } })).status, 200);
    assert.equal((await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: { description: 'no rename' } })).status, 200);
    assert.equal((await env.call('PATCH', `/api/services/${id}/toggle`, { as: env.admin, json: { enabled: false } })).status, 200);
    assert.equal((await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: { name: 'Third name' } })).status, 200);
    const rowsWhileItExists = await serviceCells();
    assert.deepEqual(rowsWhileItExists.slice(0, 5), [
      { action: 'Service updated', service: 'Third name', linked: true },
      { action: 'Service disabled', service: 'Second name', linked: true },
      { action: 'Service updated', service: 'Second name', linked: true },
      { action: 'Service updated', service: 'Second name', linked: true },
      { action: 'Service created', service: 'First name', linked: true },
    ]);
    assert.equal((await env.call('DELETE', `/api/services/${id}`, { as: env.admin })).status, 204);
    const rowsAfterDelete = await serviceCells();
    assert.deepEqual(rowsAfterDelete.slice(0, 6), [
      { action: 'Service deleted', service: 'Third name', linked: false },
      { action: 'Service updated', service: 'Third name', linked: false },
      { action: 'Service disabled', service: 'Second name', linked: false },
      { action: 'Service updated', service: 'Second name', linked: false },
      { action: 'Service updated', service: 'Second name', linked: false },
      { action: 'Service created', service: 'First name', linked: false },
    ]);
  });
});

describe('a service’s pool of targets (design.md §4.13) in the console', () => {
  const pool = {
    name: 'Pool',
    path: '/pool-console',
    targets: [{ url: 'http://127.0.0.1:9/a&b', weight: 3 }, { url: 'http://127.0.0.1:9/c' }],
    loadBalancing: 'cookie',
    healthCheck: { path: '/healthz', timeoutMs: 1500, expectStatus: 204 },
    outlierDetection: { maxFails: 5 },
    retries: 2,
  };

  it('the new form: the defaults, active checks off with their defaults ready', async () => {
    const form = (await env.call('GET', '/dashboard/services/new', { as: env.admin })).text;
    assert.match(form, /<textarea id="targets" name="targets" rows="3" required[^>]*><\/textarea>/);
    assert.match(form, /<option value="round_robin" selected>Round robin \(weighted\)<\/option>/);
    assert.match(form, /name="retries" type="number" inputmode="numeric" min="0" max="5" step="1" value="1"/);
    assert.match(form, /name="outlierDetection\.maxFails" type="number" inputmode="numeric" min="1" max="100" step="1" value="3"/);
    assert.match(form, /name="outlierDetection\.windowSeconds" [^>]*min="1" max="3600" step="1" value="10"/);
    assert.match(form, /<input type="checkbox" id="healthCheckEnabled" name="healthCheckEnabled" aria-describedby/);
    assert.match(form, /name="healthCheck\.timeoutMs" [^>]*min="100" max="60000" step="1" value="2000"/);
    assert.match(form, /name="healthCheck\.expectStatus" type="text" value="2xx"/);
  });

  it('the edit form, the services table and the audit log show the pool, escaped', async () => {
    const created = await env.call('POST', '/api/services', { as: env.admin, json: pool });
    assert.equal(created.status, 201, created.text);
    const id = created.json.id as string;
    const form = (await env.call('GET', `/dashboard/services/${id}/edit`, { as: env.admin })).text;
    assert.match(form, /name="targets"[^>]*>http:\/\/127\.0\.0\.1:9\/a&amp;b 3\nhttp:\/\/127\.0\.0\.1:9\/c<\/textarea>/);
    assert.match(form, /<option value="cookie" selected>Sticky cookie<\/option>/);
    assert.match(form, /name="retries" [^>]*value="2"/);
    assert.match(form, /name="outlierDetection\.maxFails" [^>]*value="5"/);
    assert.match(form, /name="healthCheckEnabled" checked/);
    assert.match(form, /name="healthCheck\.path" type="text" value="\/healthz"/);
    assert.match(form, /name="healthCheck\.timeoutMs" [^>]*value="1500"/);
    assert.match(form, /name="healthCheck\.expectStatus" type="text" value="204"/);

    const overview = (await env.call('GET', '/dashboard', { as: env.admin })).text;
    assert.match(
      overview,
      /<td data-label="Targets" class="wrap"><code>http:\/\/127\.0\.0\.1:9\/a&amp;b<\/code> <span class="muted">\(weight 3\)<\/span><br><code>http:\/\/127\.0\.0\.1:9\/c<\/code><br><span class="muted">Sticky cookie<\/span><\/td>/,
    );
    assert.match(overview, /<td data-label="Targets" class="wrap"><code>http:\/\/127\.0\.0\.1:9<\/code><\/td>/, 'one target: its url only');

    const changes = { targetUrl: 'http://127.0.0.1:9/c', loadBalancing: 'round_robin', healthCheck: null, outlierDetection: {}, retries: 0 };
    assert.equal((await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: changes })).status, 200);
    const audit = (await env.call('GET', '/dashboard/audit', { as: env.admin })).text;
    const text = (markup: string) => markup.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim();
    const [updated, createdRow] = [...audit.matchAll(/<td data-label="Details" class="wrap">([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    assert.deepEqual([...updated!.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => text(m[1]!)), [
      'Target URL: before: http://127.0.0.1:9/a&amp;b → after: http://127.0.0.1:9/c',
      'Targets: before: http://127.0.0.1:9/a&amp;b (weight 3), http://127.0.0.1:9/c → after: http://127.0.0.1:9/c',
      'Load balancing: before: Sticky cookie → after: Round robin (weighted)',
      'Active health checks: before: GET /healthz every 10 s, timeout 1500 ms, expects 204; healthy after 2, unhealthy after 3 in a row → after: Off',
      'Passive health checks: before: 5 failures within 10 s eject for 30 s → after: 3 failures within 10 s eject for 30 s',
      'Retries: before: 2 → after: 0',
    ]);
    assert.equal(text(createdRow!), '/pool-console → http://127.0.0.1:9/a&amp;b (weight 3), http://127.0.0.1:9/c, sign-in required');
    assert.equal((await env.call('DELETE', `/api/services/${id}`, { as: env.admin })).status, 204);
  });

  it('an audit entry from before pools names its one target', async () => {
    const db = new BetterSqlite3(env.gw.databasePath);
    try {
      const service = { id: randomUUID(), name: 'Before pools', path: '/before-pools', targetUrl: 'http://127.0.0.1:9/old', requireAuth: false };
      db.prepare("INSERT INTO audit_logs (action, user_id, service_id, ip_address, details, timestamp) VALUES ('SERVICE_CREATED', 'admin-sub', ?, '127.0.0.1', ?, ?)").run(
        service.id,
        JSON.stringify({ service }),
        Date.now(),
      );
    } finally {
      db.close();
    }
    const audit = (await env.call('GET', '/dashboard/audit', { as: env.admin })).text;
    assert.match(audit, /<code>\/before-pools<\/code> → <code>http:\/\/127\.0\.0\.1:9\/old<\/code>, open to anyone/);
  });
});

/** The audit page's rows, newest first: the action, the service cell's text, and whether it links. */
async function serviceCells(): Promise<Array<{ action: string; service: string; linked: boolean }>> {
  const page = await env.call('GET', '/dashboard/audit', { as: env.admin });
  assert.equal(page.status, 200);
  return [...page.text.matchAll(/<th scope="row" data-label="Action"><span[^>]*>([^<]+)<\/span><\/th>[\s\S]*?<td data-label="Service">([\s\S]*?)<\/td>/g)].map(
    (match) => ({ action: match[1]!, service: match[2]!.replace(/<[^>]+>/g, '').trim(), linked: match[2]!.includes('<a ') }),
  );
}
