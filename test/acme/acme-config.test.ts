/** The ACME variables (shared/config/tls-settings.ts, README "Certificates by ACME"): refused at start naming them, as the TLS files are. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../shared/config/config.js';
import { configProblems } from '../support/config-problems.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-acme-config-'));
const caFile = join(dir, 'ca.pem');
writeFileSync(caFile, 'PEM');
after(() => rmSync(dir, { recursive: true, force: true }));

const problems = configProblems;

test('ACME_EMAIL turns ACME on: PORT speaks TLS, Let\'s Encrypt\'s directory by default, ADMIN_URL\'s listener too when https', () => {
  assert.equal(loadConfig({}).tls.acme, undefined);
  const config = loadConfig({ PUBLIC_URL: 'https://gw.example.com', ADMIN_URL: 'https://admin.example.com', ACME_EMAIL: 'ops@example.com' });
  assert.deepEqual(config.tls.acme, { email: 'ops@example.com', directoryUrl: new URL('https://acme-v02.api.letsencrypt.org/directory'), caFile: undefined });
  assert.deepEqual(config.tls.public, { defaultPair: undefined, directory: undefined, acme: true });
  assert.deepEqual(config.tls.admin, { defaultPair: undefined, directory: undefined, acme: true });
  const privateCa = loadConfig({ PUBLIC_URL: 'https://gw.example.com', ACME_EMAIL: 'ops@example.com', ACME_DIRECTORY_URL: 'https://127.0.0.1:14000/dir', ACME_CA_FILE: caFile });
  assert.equal(privateCa.tls.acme?.caFile, caFile);
  assert.equal(privateCa.tls.acme?.directoryUrl.href, 'https://127.0.0.1:14000/dir');
});

test('each wrong setting is refused, naming its variables', () => {
  assert.deepEqual(problems({ ACME_EMAIL: 'ops@example.com' }), ['PUBLIC_URL, ACME_EMAIL: PORT speaks HTTPS with certificates by ACME, so PUBLIC_URL must be an https:// URL']);
  assert.deepEqual(problems({ PUBLIC_URL: 'https://gw.example.com', ACME_EMAIL: 'ops', ACME_DIRECTORY_URL: 'http://ca.example.com/dir' }), [
    "ACME_EMAIL: must be an email address (the ACME account's contact)",
    'ACME_DIRECTORY_URL: must be an https:// URL (an ACME directory)',
  ]);
  assert.deepEqual(problems({ PUBLIC_URL: 'https://gw.example.com', ACME_EMAIL: 'ops@example.com', ACME_CA_FILE: join(dir, 'missing.pem') }), [
    `ACME_CA_FILE: cannot read ${join(dir, 'missing.pem')} (ENOENT)`,
  ]);
  assert.deepEqual(problems({ ACME_CA_FILE: caFile }), ['ACME_CA_FILE: trusts an ACME server, so it needs ACME_EMAIL, which turns ACME on']);
});
