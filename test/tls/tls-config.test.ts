/**
 * The TLS variables are checked at start (design.md §6): each wrong combination or unreadable file
 * stops it with a line naming the variables, before anything listens.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConfigError, loadConfig } from '../../shared/config/config.js';
import { makeTestCa, type LeafFiles } from '../support/test-certificates.js';

let dir: string;
let pair: LeafFiles;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-config-'));
  pair = makeTestCa(dir).issue('gateway', ['localhost']);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The problems loadConfig reports for `env`. */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig({ PUBLIC_URL: 'https://gateway.example.com', ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

test('TLS files with an http PUBLIC_URL are refused, naming both', () => {
  assert.deepEqual(problems({ PUBLIC_URL: 'http://gateway.example.com', TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key }), [
    'PUBLIC_URL, TLS_CERT_FILE: PORT speaks HTTPS with TLS files, so PUBLIC_URL must be an https:// URL',
  ]);
  assert.match(problems({ PUBLIC_URL: 'http://gateway.example.com', TLS_CERTS_DIR: dir })[0]!, /^PUBLIC_URL, TLS_CERTS_DIR: /);
});

test('a certificate without its key, or a key without its certificate, is refused', () => {
  assert.deepEqual(problems({ TLS_CERT_FILE: pair.cert }), ['TLS_CERT_FILE, TLS_KEY_FILE: set both, the certificate (PEM, with its chain) and its key']);
  assert.deepEqual(problems({ TLS_KEY_FILE: pair.key }), ['TLS_CERT_FILE, TLS_KEY_FILE: set both, the certificate (PEM, with its chain) and its key']);
  assert.match(problems({ ADMIN_URL: 'https://admin.example.com', ADMIN_TLS_CERT_FILE: pair.cert })[0]!, /^ADMIN_TLS_CERT_FILE, ADMIN_TLS_KEY_FILE: set both/);
});

test('unreadable files and directories are refused naming the variable', () => {
  assert.deepEqual(problems({ TLS_CERT_FILE: join(dir, 'missing.crt'), TLS_KEY_FILE: pair.key }), [`TLS_CERT_FILE: cannot read ${join(dir, 'missing.crt')} (ENOENT)`]);
  assert.deepEqual(problems({ TLS_CERTS_DIR: join(dir, 'nowhere') }), [`TLS_CERTS_DIR: cannot read the directory ${join(dir, 'nowhere')} (ENOENT)`]);
});

test('ADMIN_TLS_* need an https ADMIN_URL; HTTP_PORT an https PUBLIC_URL; HSTS a max-age', () => {
  assert.match(problems({ ADMIN_TLS_CERT_FILE: pair.cert, ADMIN_TLS_KEY_FILE: pair.key })[0]!, /^ADMIN_URL, ADMIN_TLS_CERT_FILE: /);
  assert.deepEqual(problems({ PUBLIC_URL: 'http://gateway.example.com', HTTP_PORT: '80' }), ['HTTP_PORT: redirects to https, so PUBLIC_URL must be an https:// URL']);
  assert.match(problems({ HSTS: 'max-age=1; evil=1' })[0]!, /^HSTS: /);
  assert.match(problems({ HTTP_PORT: '70000' })[0]!, /^HTTP_PORT: /);
});

test('the settings read: HSTS on by default, off with 0 or off; the admin listener serves the public pair without its own', () => {
  const config = loadConfig({ PUBLIC_URL: 'https://gateway.example.com', ADMIN_URL: 'https://admin.example.com', TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key, HTTP_PORT: '80' });
  assert.equal(config.tls.hsts, 'max-age=31536000');
  assert.equal(config.tls.httpPort, 80);
  assert.equal(config.tls.admin?.defaultPair?.certFile, pair.cert);
  for (const off of ['0', 'off', 'OFF']) assert.equal(loadConfig({ HSTS: off }).tls.hsts, undefined);
  const plain = loadConfig({});
  assert.equal(plain.tls.public, undefined);
  assert.equal(plain.tls.admin, undefined);
  assert.equal(loadConfig({ PUBLIC_URL: 'https://gateway.example.com', ADMIN_URL: 'https://admin.example.com' }).tls.admin, undefined, 'https behind a terminator: plain listeners as before');
});
