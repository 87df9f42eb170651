import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { openNewServiceForm } from '../support/browser.js';

/**
 * Rules inside a service (design.md §4.18) in Chromium: the console's service form takes them one
 * per line (`public POST /hooks/*`, `deny /internal`, `require groups=admins /admin`) and the
 * CORS preflights' checkbox; the API's reason for a wrong line shows next to the rules; the edit
 * form and the service page show them back as lines.
 */

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', browser: true, admin: { sub: 'reader-admin', name: 'Rita Reader', email: 'reader@example.com' }, api: 'admin' });

const services = async () => (await env.call('GET', '/api/services', { as: env.admin })).json as Record<string, unknown>[];

test('in Chromium: a service created with rules written one per line, shown back on its page and in the edit form', async () => {
  const { page, errors } = await openNewServiceForm(env.browser, env.publicUrl);

  await page.getByLabel('Name').fill('Hooked');
  await page.getByLabel('Path').fill('/hooked');
  await page.getByLabel('Target URLs').fill('http://127.0.0.1:9');
  await page.getByLabel('Rules', { exact: true }).fill('public post /hooks/*');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#rules-error').waitFor();
  assert.equal(await page.locator('#rules-error').textContent(), 'Rules: methods must be HTTP methods in capitals, such as GET (got "post").');

  const lines = 'public POST /hooks/*\n\ndeny /internal /api/*/admin\nrequire GET,PUT groups=admins,ops domains=example.org /admin';
  await page.getByLabel('Rules', { exact: true }).fill(lines);
  await page.getByLabel('Let CORS preflights through without sign-in').check();
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.waitForURL(/\/dashboard\/services\/[0-9a-f-]{36}$/);
  const [created] = await services();
  assert.deepEqual(created!.rules, [
    { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
    { paths: ['/internal', '/api/*/admin'], action: 'deny' },
    { paths: ['/admin'], methods: ['GET', 'PUT'], action: 'require', access: { groups: ['admins', 'ops'], emails: [], emailDomains: ['example.org'], subjects: [] } },
  ]);
  assert.equal(created!.corsPreflight, 'public');
  const shown = lines.replace('\n\n', '\n').split('\n');
  assert.deepEqual(await page.locator('[data-rules] li').allTextContents(), shown);

  await page.goto(`${env.publicUrl}/dashboard/services/${String(created!.id)}/edit`);
  assert.equal(await page.getByLabel('Rules', { exact: true }).inputValue(), shown.join('\n'));
  assert.equal(await page.getByLabel('Let CORS preflights through without sign-in').isChecked(), true);
  await page.getByLabel('Rules', { exact: true }).fill('');
  await page.getByLabel('Let CORS preflights through without sign-in').uncheck();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/services/${String(created!.id)}`);
  const [edited] = await services();
  assert.deepEqual([edited!.rules, edited!.corsPreflight], [[], 'auth']);
  assert.deepEqual(errors, []);
  await page.context().close();
});
