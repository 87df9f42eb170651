import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { openNewServiceForm } from '../support/browser.js';

/**
 * Pools of targets (design.md §4.13) in Chromium: the console's service form edits a pool of targets (one per line, `URL
 * [weight]`), its balancing, retries, passive health checks and active ones (on or off); the API's
 * reasons show next to the field they are about; the services table and the audit log show the
 * pool. A screenshot of the filled form goes to test-output/.
 */

/** The parts of the page's DOM that evaluated functions touch (tests compile without the DOM library). */
declare const document: { activeElement: { id: string } | null };

const SCREENSHOTS = new URL('../../../test-output/', import.meta.url).pathname;

/** env.admin (Rita Reader, another administrator) reads the services through the API. */
const env = useAdminSession(
  { provider: true, gatewayHost: 'localhost', browser: true, admin: { sub: 'reader-admin', name: 'Rita Reader', email: 'reader@example.com' }, api: 'admin' },
  async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
  },
);

const services = async () => (await env.call('GET', '/api/services', { as: env.admin })).json as Record<string, unknown>[];

test('in Chromium: a service created with three weighted targets, sticky balancing and both health checks, then edited down to two without active checks', async () => {
  const { page, errors } = await openNewServiceForm(env.browser, env.publicUrl);

  // Defaults shown: round robin, 1 retry, 3 failures in 10 s eject for 30 s, no active checks (their defaults ready).
  assert.equal(await page.getByLabel('Load balancing').inputValue(), 'round_robin');
  assert.equal(await page.getByLabel('Retries').inputValue(), '1');
  assert.deepEqual(
    await Promise.all(['Failures', 'Window, seconds', 'Ejection, seconds'].map((label) => page.getByLabel(label).inputValue())),
    ['3', '10', '30'],
  );
  assert.equal(await page.getByLabel('Probe each target').isChecked(), false);
  assert.equal(await page.getByLabel('Health endpoint').inputValue(), '/');
  assert.equal(await page.getByLabel('Expected status').inputValue(), '2xx');

  // A weight out of range: the reason next to the targets, which get the focus.
  await page.getByLabel('Name').fill('Orders');
  await page.getByLabel('Path').fill('/orders');
  await page.getByLabel('Target URLs').fill('http://127.0.0.1:9/a 3\nhttp://127.0.0.1:9/b 0\n\nhttp://127.0.0.1:9/c 2');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#targets-error').waitFor();
  assert.equal(await page.locator('#targets-error').textContent(), 'Target URLs weight must be an integer from 1 to 100 (got 0).');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'targets');

  // A timeout not below the interval: the reason on the active checks as a whole.
  await page.getByLabel('Target URLs').fill('http://127.0.0.1:9/a 3\nhttp://127.0.0.1:9/b\n\nhttp://127.0.0.1:9/c 2');
  await page.getByLabel('Load balancing').selectOption('cookie');
  await page.getByLabel('Retries').fill('2');
  await page.getByLabel('Failures').fill('5');
  await page.getByLabel('Probe each target').check();
  await page.getByLabel('Health endpoint').fill('/healthz');
  await page.getByLabel('Timeout, milliseconds').fill('20000');
  await page.getByLabel('Expected status').fill('204');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.locator('#healthCheck-error').waitFor();
  assert.equal(await page.locator('#healthCheck-error').textContent(), 'In the active health checks, timeoutMs must be below intervalSeconds × 1000.');
  assert.equal(await page.locator('#targets-error').isHidden(), true, 'the fixed field\'s reason is gone');
  await page.screenshot({ path: `${SCREENSHOTS}console-service-pool-form.png`, fullPage: true });
  await page.getByLabel('Timeout, milliseconds').fill('1500');
  await page.getByRole('button', { name: 'Create service' }).click();
  await page.waitForURL(/\/dashboard\/services\/[0-9a-f-]{36}$/);
  await page.getByText('Created “Orders”.').waitFor();
  const id = page.url().split('/').at(-1)!;

  const [created] = await services();
  assert.deepEqual(
    {
      targetUrl: created!.targetUrl,
      targets: created!.targets,
      loadBalancing: created!.loadBalancing,
      retries: created!.retries,
      outlierDetection: created!.outlierDetection,
      healthCheck: created!.healthCheck,
    },
    {
      targetUrl: 'http://127.0.0.1:9/a',
      targets: [
        { url: 'http://127.0.0.1:9/a', weight: 3 },
        { url: 'http://127.0.0.1:9/b', weight: 1 },
        { url: 'http://127.0.0.1:9/c', weight: 2 },
      ],
      loadBalancing: 'cookie',
      retries: 2,
      outlierDetection: { maxFails: 5, windowSeconds: 10, ejectSeconds: 30 },
      healthCheck: { path: '/healthz', intervalSeconds: 10, timeoutMs: 1500, healthyThreshold: 2, unhealthyThreshold: 3, expectStatus: 204 },
    },
  );

  // The overview's table: every target, its weight unless 1, and the balancing.
  await page.goto(`${env.publicUrl}/dashboard`);
  const cell = page.locator('.services-table td[data-label="Targets"]');
  assert.equal((await cell.innerText()).trim(), 'http://127.0.0.1:9/a (weight 3)\nhttp://127.0.0.1:9/b\nhttp://127.0.0.1:9/c (weight 2)\nSticky cookie');

  // Edit: the form shows the pool as saved; drop a target, reweigh one, turn active checks off.
  await page.goto(`${env.publicUrl}/dashboard/services/${id}/edit`);
  assert.equal(await page.getByLabel('Target URLs').inputValue(), 'http://127.0.0.1:9/a 3\nhttp://127.0.0.1:9/b\nhttp://127.0.0.1:9/c 2');
  assert.equal(await page.getByLabel('Load balancing').inputValue(), 'cookie');
  assert.equal(await page.getByLabel('Probe each target').isChecked(), true);
  assert.equal(await page.getByLabel('Timeout, milliseconds').inputValue(), '1500');
  await page.getByLabel('Target URLs').fill('http://127.0.0.1:9/c 2\nhttp://127.0.0.1:9/a 4');
  await page.getByLabel('Probe each target').uncheck();
  await page.getByLabel('Ejection, seconds').fill('60');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.waitForURL(`${env.publicUrl}/dashboard/services/${id}`);
  await page.getByText('Saved “Orders”.').waitFor();

  const [edited] = await services();
  assert.equal(edited!.targetUrl, 'http://127.0.0.1:9/c');
  assert.deepEqual(edited!.targets, [
    { url: 'http://127.0.0.1:9/c', weight: 2 },
    { url: 'http://127.0.0.1:9/a', weight: 4 },
  ]);
  assert.equal(edited!.healthCheck, null);
  assert.deepEqual(edited!.outlierDetection, { maxFails: 5, windowSeconds: 10, ejectSeconds: 60 });
  assert.equal(edited!.loadBalancing, 'cookie', 'unchanged fields stay');

  // The audit log words each change.
  await page.goto(`${env.publicUrl}/dashboard/audit`);
  const changes = page.locator('.audit-table tbody tr').first().locator('.changes');
  const lines = (await changes.locator('li').allTextContents()).map((line) => line.replace(/\s+/g, ' ').trim());
  assert.deepEqual(lines, [
    'Target URL: before: http://127.0.0.1:9/a → after: http://127.0.0.1:9/c',
    'Targets: before: http://127.0.0.1:9/a (weight 3), http://127.0.0.1:9/b, http://127.0.0.1:9/c (weight 2) → after: http://127.0.0.1:9/c (weight 2), http://127.0.0.1:9/a (weight 4)',
    'Active health checks: before: GET /healthz every 10 s, timeout 1500 ms, expects 204; healthy after 2, unhealthy after 3 in a row → after: Off',
    'Passive health checks: before: 5 failures within 10 s eject for 30 s → after: 5 failures within 10 s eject for 60 s',
  ]);
  assert.deepEqual(errors, []);
  await page.context().close();
});
