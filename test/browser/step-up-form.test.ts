import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { openNewServiceForm } from '../support/browser.js';

/**
 * Step-up sign-in (design.md §4.18) in the console's service form, in Chromium: the service's
 * `maxAge` and `acr` fields, a rule line's `maxAge=… acr=…`; the API's reason for a wrong value
 * shows next to its field; the edit form shows them back, and emptied fields remove them.
 */

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', browser: true, admin: { sub: 'step-up-admin', name: 'Stella Step', email: 'step@example.com' }, api: 'admin' });

const services = async () => (await env.call('GET', '/api/services', { as: env.admin })).json as Record<string, unknown>[];

test("in Chromium: a service's step-up and a rule's, written in the form, stored, shown back and removed", async () => {
  const { page, errors } = await openNewServiceForm(env.browser, env.publicUrl);
  await page.getByLabel('Name').fill('Billing');
  await page.getByLabel('Path').fill('/billing');
  await page.getByLabel('Target URLs').fill('http://127.0.0.1:9');
  await page.getByLabel('Recent sign-in (seconds)').fill('-1');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#maxAge-error').waitFor();
  assert.match((await page.locator('#maxAge-error').textContent()) ?? '', /must be at least 0/);

  await page.getByLabel('Recent sign-in (seconds)').fill('3600');
  await page.getByLabel('Authentication levels (acr)').fill('mfa\nurn:example:phr');
  await page.getByLabel('Rules', { exact: true }).fill('require maxAge=300 acr=hwk /admin');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.waitForURL(/\/dashboard\/services\/[0-9a-f-]{36}$/);
  const [created] = await services();
  assert.deepEqual([created!.maxAge, created!.acr], [3600, ['mfa', 'urn:example:phr']]);
  assert.deepEqual(created!.rules, [{ paths: ['/admin'], action: 'require', access: null, maxAge: 300, acr: ['hwk'] }]);

  await page.goto(`${env.publicUrl}/dashboard/services/${String(created!.id)}/edit`);
  assert.equal(await page.getByLabel('Recent sign-in (seconds)').inputValue(), '3600');
  assert.equal(await page.getByLabel('Authentication levels (acr)').inputValue(), 'mfa\nurn:example:phr');
  assert.equal(await page.getByLabel('Rules', { exact: true }).inputValue(), 'require maxAge=300 acr=hwk /admin');
  await page.getByLabel('Recent sign-in (seconds)').fill('');
  await page.getByLabel('Authentication levels (acr)').fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/services/${String(created!.id)}`);
  const [edited] = await services();
  assert.deepEqual([edited!.maxAge, edited!.acr], [null, null]);
  assert.deepEqual(errors, []);
  await page.context().close();
});
