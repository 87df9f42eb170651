/**
 * Services on host names through the running gateway's admin API and console (issue 31, design.md
 * §5): each answer checked against the OpenAPI document (hosts on the service object, the 409 that
 * names a (host, path) pair, the `host` filter and its 400), the export and apply of a registry with
 * hosts, and the console's form, services table and service page with the hosts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiClient } from '../support/api-client.js';
import { useAdminSession } from '../support/admin-session.js';
import { parseForms } from '../support/html-forms.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';

let call: ReturnType<typeof checkedApiClient>;

const env = useAdminSession({ upstream: true }, async (env) => {
  const served = await apiClient(env.apiUrl)('GET', '/api/openapi.json');
  assert.equal(served.status, 200, served.text);
  call = checkedApiClient(env.apiUrl, new OpenApiChecker(served.json));
});

const body = (fields: Record<string, unknown>) => ({ name: 'App', path: '/', targetUrl: env.upstream.origin, ...fields });

/** Creates a service through the checked client; the answer's JSON. */
async function create(fields: Record<string, unknown>): Promise<any> {
  const response = await call('POST', '/api/services', { as: env.admin, json: body(fields) });
  assert.equal(response.status, 201, response.text);
  return response.json;
}

/** The console page at `path` as the administrator sees it. */
async function page(path: string): Promise<string> {
  const response = await env.call('GET', path, { as: env.admin });
  assert.equal(response.status, 200, response.text);
  return response.text;
}

describe('the services API with hosts', () => {
  it('creates a service on hosts, normalized, and answers 409 naming the pair for a second at / there', async () => {
    const app = await create({ name: 'Hosted', hosts: ['App.Localhost.', 'bücher.localhost'] });
    assert.deepEqual(app.hosts, ['app.localhost', 'xn--bcher-kva.localhost']);
    const root = await create({ name: 'Root', path: '/hosts-api-root' });
    assert.equal('hosts' in root, false);
    const taken = await call('POST', '/api/services', { as: env.admin, json: body({ name: 'Twin', hosts: ['other.localhost', 'APP.localhost'] }) });
    assert.equal(taken.status, 409);
    assert.deepEqual(taken.json, {
      error: 'Path already in use',
      fields: { hosts: 'app.localhost already has a service at /', path: 'is already in use on app.localhost' },
    });
    const pathTaken = await call('POST', '/api/services', { as: env.admin, json: body({ name: 'Twin', path: '/HOSTS-API-ROOT' }) });
    assert.equal(pathTaken.status, 409);
    assert.deepEqual(pathTaken.json, { error: 'Path already in use' });
    const bad = await call('PUT', `/api/services/${app.id}`, { as: env.admin, json: { hosts: ['app.localhost:8080'] } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, {
      error: 'Invalid service: hosts must not carry a port (got "app.localhost:8080")',
      fields: { hosts: 'must not carry a port (got "app.localhost:8080")' },
    });
  });

  it('lists the services naming a host, in any spelling of it; a bad host is 400 naming the parameter', async () => {
    const wild = await create({ name: 'Wild', hosts: ['*.apps.localhost'] });
    const api = await create({ name: 'API', path: '/v2', hosts: ['filter.localhost'] });
    const named = await call('GET', '/api/services?host=FILTER.localhost.', { as: env.admin });
    assert.equal(named.status, 200);
    assert.deepEqual(named.json.map((s: { id: string }) => s.id), [api.id]);
    const wildcard = await call('GET', `/api/services?host=${encodeURIComponent('*.Apps.localhost')}`, { as: env.admin });
    assert.deepEqual(wildcard.json.map((s: { id: string }) => s.id), [wild.id]);
    assert.deepEqual((await call('GET', '/api/services?host=nobody.localhost', { as: env.admin })).json, []);
    const all = await call('GET', '/api/services', { as: env.admin });
    assert.ok(all.json.length >= 2);
    const wrong = await call('GET', '/api/services?host=filter.localhost:80', { as: env.admin });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.json, { error: 'host must not carry a port (got "filter.localhost:80")', fields: { host: 'must not carry a port (got "filter.localhost:80")' } });
  });

  it('exports hosts and applies the export again without a change; a document taking a pair twice is refused whole', async () => {
    const exported = await call('GET', '/api/services/export', { as: env.admin });
    assert.equal(exported.status, 200);
    assert.ok(exported.json.services.some((s: { hosts?: string[] }) => s.hosts?.includes('app.localhost')));
    const again = await call('POST', '/api/services/apply', { as: env.admin, json: exported.json });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.json.create, again.json.update, again.json.delete], [[], [], []]);
    const doubled = { ...exported.json, services: [...exported.json.services, { name: 'Twin', path: '/', targetUrl: env.upstream.origin, hosts: ['app.localhost'] }] };
    const refused = await call('POST', '/api/services/apply', { as: env.admin, json: doubled });
    assert.equal(refused.status, 400);
    assert.match(refused.json.fields[`services[${exported.json.services.length}].hosts`], /^names app\.localhost at services\[\d+\]'s path too/);
    assert.deepEqual((await call('GET', '/api/services/export', { as: env.admin })).json, exported.json);
  });
});

describe('the console with hosts', () => {
  it('the edit form holds the hosts one per line; what the form script makes of its lines and commas is saved as listed', async () => {
    const service = await create({ name: 'Form', path: '/form', hosts: ['form.localhost', '*.form.localhost'] });
    const html = await page(`/dashboard/services/${service.id}/edit`);
    const form = parseForms(html, env.apiUrl).find((f) => f.fields.some((field) => field.name === 'hosts'))!;
    const field = form.fields.find((f) => f.name === 'hosts')!;
    assert.equal(field.value, 'form.localhost\n*.form.localhost');
    assert.match(html, /<label for="hosts">Hosts<\/label>/);
    assert.match(html, /id="hosts-hint">Optional: the host names the service is reached on, one per line or separated by commas/);
    assert.match(html, /data-error-for="hosts"/);
    // service-form.js: split on new lines and commas, trimmed, blanks dropped.
    const hosts = `${field.value}, extra.localhost\n`.split(/[\n,]/).map((h) => h.trim()).filter((h) => h !== '');
    const saved = await call('PUT', `/api/services/${service.id}`, { as: env.admin, json: { hosts } });
    assert.deepEqual(saved.json.hosts, ['form.localhost', '*.form.localhost', 'extra.localhost']);
    const newForm = await page('/dashboard/services/new');
    assert.equal(parseForms(newForm, env.apiUrl).flatMap((f) => f.fields).find((f) => f.name === 'hosts')!.value, '');
  });

  it("the table and the service page link each host with PUBLIC_URL's scheme and port; a wildcard is not linked", async () => {
    const service = await create({ name: 'Linked', path: '/linked', hosts: ['linked.localhost', '*.linked.localhost'] });
    const { port } = new URL(env.publicUrl);
    const link = `<a href="http://linked.localhost:${port}/linked/" title="Open linked.localhost/linked/ through the gateway"><code>linked.localhost/linked/</code></a>`;
    const overview = await page('/dashboard');
    assert.ok(overview.includes(link), 'the table links the host');
    assert.ok(overview.includes('<br><code>*.linked.localhost/linked/</code>'), 'the wildcard is shown, unlinked');
    const servicePage = await page(`/dashboard/services/${service.id}`);
    assert.match(servicePage, /<dt>Hosts<\/dt><dd class="wrap" data-hosts>/);
    assert.ok(servicePage.includes(link));
    assert.ok(servicePage.includes('<dt>Path</dt><dd><code>/linked</code> on each host</dd>'));
  });

  it('the audit log shows the hosts a service was created with and how they changed', async () => {
    const service = await create({ name: 'Audited', path: '/audited', hosts: ['audited.localhost'] });
    await call('PUT', `/api/services/${service.id}`, { as: env.admin, json: { hosts: [] } });
    const audit = await page('/dashboard/audit');
    assert.ok(audit.includes('<code>/audited</code> on <code>audited.localhost</code>'));
    assert.match(audit, /<span class="field">Hosts<\/span>:\s*<del><span class="visually-hidden">before: <\/span>audited\.localhost<\/del> → <ins><span class="visually-hidden">after: <\/span>none<\/ins>/);
  });
});
