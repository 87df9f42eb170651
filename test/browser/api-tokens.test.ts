import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';

/**
 * design.md §4.8 in Chromium: an admin makes an API token in the console, sees and copies its
 * secret once, a script uses it, and the admin revokes it after a confirmation.
 */

/** The parts of the page's API that evaluated functions touch (tests compile without the DOM library). */
declare const navigator: { clipboard: { readText(): Promise<string> } };

const env = useAdminSession({ provider: true, gatewayHost: 'localhost', browser: true, admin: false });

test('in Chromium: an admin creates a token, copies its secret once, and revokes it', async () => {
  const errors: string[] = [];
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  const page = await context.newPage();

  await page.goto(`${env.publicUrl}/dashboard/tokens`);
  await page.locator('#login').click();
  await page.locator('#email').fill('admin@example.com');
  await page.locator('#password').fill('admin-password');
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // consent
  await page.waitForURL(`${env.publicUrl}/dashboard/tokens`);
  await page.getByText('No tokens yet.').waitFor();
  assert.equal(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API tokens' }).getAttribute('aria-current'), 'page');

  // A blank name: the API's message beside the field, which gets the focus.
  await page.getByLabel('Name').fill('   ');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.locator('#name-error').waitFor();
  assert.equal(await page.locator('#name-error').textContent(), 'Name must not be empty.');
  assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');

  // Created: the secret is shown once, selected, and copied by the button.
  await page.getByLabel('Name').fill('Deploy bot');
  await page.getByLabel('Scope').selectOption('write');
  await page.getByLabel('Expires after').selectOption('never');
  await page.getByRole('button', { name: 'Create token' }).click();
  const secretField = page.getByLabel('The new token');
  await secretField.waitFor();
  const secret = await secretField.inputValue();
  assert.match(secret, /^ght_[A-Za-z0-9_-]{43}$/);
  await page.getByText('Created “Deploy bot”. Copy it now: it is not shown again.').waitFor();
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied to the clipboard.').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  const row = page.locator('.tokens-table tbody tr', { hasText: 'Deploy bot' });
  assert.match((await row.textContent()) ?? '', /Write[\s\S]*Never/);

  // A script uses it; the list shows the use after the page's next refresh, and never the secret again.
  const created = await apiClient(env.publicUrl)('POST', '/api/services', {
    authorization: `Bearer ${secret}`,
    json: { name: 'Deployed', path: '/deployed', targetUrl: 'http://127.0.0.1:9' },
  });
  assert.equal(created.status, 201, created.text);
  await page.reload();
  assert.equal(await page.locator('[data-new-secret]').isHidden(), true);
  assert.ok(!(await page.content()).includes(secret));
  assert.doesNotMatch((await row.locator('[data-label="Last used"]').textContent()) ?? '', /Never/);

  // Revoke: the dialog names the token; Cancel keeps it, confirming revokes it.
  await page.getByRole('button', { name: 'Revoke Deploy bot' }).click();
  const dialog = page.getByRole('dialog');
  assert.match((await dialog.textContent()) ?? '', /Revoke “Deploy bot”\?[\s\S]*refused from now on/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await row.count(), 1);
  await page.getByRole('button', { name: 'Revoke Deploy bot' }).click();
  await dialog.getByRole('button', { name: 'Revoke “Deploy bot”' }).click();
  await page.getByText('Revoked “Deploy bot”.').waitFor();
  await page.getByText('No tokens yet.').waitFor();
  assert.equal((await apiClient(env.publicUrl)('GET', '/api/services', { authorization: `Bearer ${secret}` })).status, 401);

  // The audit log: the token named as the actor of what it did.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
  const actions = await page.locator('.audit-table tbody th').allTextContents();
  assert.deepEqual(actions, ['API token revoked', 'Service created', 'API token created', 'Signed in']);
  assert.match((await page.locator('.audit-table tbody tr').nth(1).textContent()) ?? '', /API token “Deploy bot”/);

  assert.deepEqual(errors, []);
  await context.close();
});
