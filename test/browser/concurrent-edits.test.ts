import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { useAdminSession } from '../support/admin-session.js';

/**
 * design.md §4.9 in Chromium: the console's edit form and a service's buttons send the ETag the
 * page was made with as If-Match; when another admin changed the service meanwhile, the page says
 * what changed, saves nothing, and its Reload button shows the service as it is. A screenshot of
 * the notice goes to test-output/.
 */

/** The parts of the page's DOM that evaluated functions touch (tests compile without the DOM library). */
declare const document: { activeElement: { textContent: string | null } | null };

const SCREENSHOTS = new URL('../../../test-output/', import.meta.url).pathname;

/** env.admin (Otto Other) is the other admin, changing the service through the API while the page is open. */
const env = useAdminSession(
  { provider: true, gatewayHost: 'localhost', browser: true, admin: { sub: 'other-admin', name: 'Otto Other', email: 'other@example.com' }, api: 'admin' },
  async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
  },
);

/** Changes service `id` as the other admin, unconditionally. */
async function changeElsewhere(id: string, fields: Record<string, unknown>): Promise<void> {
  const changed = await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: fields });
  assert.equal(changed.status, 200, changed.text);
}

const service = async (id: string) => (await env.call('GET', `/api/services/${id}`, { as: env.admin })).json;
const notice = (page: Page) => page.locator('#notices .notice');

test('in Chromium: an edit, a toggle and a delete made on a stale page get 412, say what changed, and Reload shows the service as it is', async () => {
  const errors: string[] = [];
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.on('page', (page) => page.on('pageerror', (error) => errors.push(error.message)));
  const page = await context.newPage();
  const created = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'Conflicted', path: '/conflicted', targetUrl: 'http://127.0.0.1:9' } });
  assert.equal(created.status, 201, created.text);
  const id: string = created.json.id;

  await page.goto(`${env.publicUrl}/dashboard/services/${id}/edit`);
  await page.locator('#login').click();
  await page.locator('#email').fill('admin@example.com');
  await page.locator('#password').fill('admin-password');
  await page.locator('button[type=submit]').click();
  await page.locator('button[type=submit]').click(); // consent
  await page.waitForURL(`${env.publicUrl}/dashboard/services/${id}/edit`);

  // The form: someone else renames the service and moves its target while it is open.
  await page.getByLabel('Description').fill('mine');
  await changeElsewhere(id, { name: 'Renamed', targetUrl: 'http://127.0.0.1:10' });
  await page.getByRole('button', { name: 'Save changes' }).click();
  await notice(page).getByRole('button', { name: 'Reload' }).waitFor();
  assert.equal(
    await notice(page).locator('span').textContent(),
    'Your changes were not saved: someone else changed “Conflicted” since this page showed it. Changed: Name: “Conflicted” → “Renamed”; Target URL: “http://127.0.0.1:9” → “http://127.0.0.1:10”; Targets: http://127.0.0.1:9 → http://127.0.0.1:10. Reload to see it as it is now.',
  );
  assert.equal(await notice(page).getAttribute('role'), 'alert');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Reload', 'the way on has the focus');
  assert.equal((await service(id)).description, '', 'nothing saved');
  await page.screenshot({ path: `${SCREENSHOTS}console-edit-conflict.png` });
  await notice(page).getByRole('button', { name: 'Reload' }).click();
  await page.getByRole('heading', { name: 'Edit Renamed' }).waitFor();
  assert.equal(await page.getByLabel('Target URL').inputValue(), 'http://127.0.0.1:10');
  await page.getByLabel('Description').fill('mine');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/services/${id}`);
  await page.getByText('Saved “Renamed”.').waitFor();
  assert.equal((await service(id)).description, 'mine');

  // A button on the service page: the region holding the focus is not refreshed, so the page stays stale.
  const disable = page.getByRole('button', { name: 'Disable Renamed' });
  await disable.focus();
  await changeElsewhere(id, { description: 'theirs', requireAuth: false });
  await page.keyboard.press('Enter');
  await notice(page).getByRole('button', { name: 'Reload' }).waitFor();
  assert.equal(
    await notice(page).locator('span').textContent(),
    'Could not disable “Renamed”: someone else changed “Renamed” since this page showed it. Changed: Sign-in required: yes → no; Description: “mine” → “theirs”. Reload to see it as it is now.',
  );
  assert.equal((await service(id)).enabled, true);
  await notice(page).getByRole('button', { name: 'Reload' }).click();
  await page.getByText('Open to anyone').waitFor();
  await page.getByRole('button', { name: 'Disable Renamed' }).click();
  await page.getByText('Disabled “Renamed”.').waitFor();
  assert.equal((await service(id)).enabled, false);

  // Delete: confirmed in the dialog, refused all the same, and the service kept.
  const remove = page.getByRole('button', { name: 'Delete Renamed' });
  await remove.focus();
  await changeElsewhere(id, { name: 'Renamed again' });
  await page.keyboard.press('Enter');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete “Renamed”' }).click();
  await notice(page).getByRole('button', { name: 'Reload' }).waitFor();
  assert.equal(
    await notice(page).locator('span').textContent(),
    'Could not delete “Renamed”: someone else changed “Renamed” since this page showed it. Changed: Name: “Renamed” → “Renamed again”. Reload to see it as it is now.',
  );
  assert.equal((await service(id)).name, 'Renamed again');

  assert.deepEqual(errors, []);
  await context.close();
});
