import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../shared/config/config.js';
import { VARIABLES } from '../shared/config/variables.js';
import { configProblems } from './support/config-problems.js';

const MAIN = new URL('../admin/process/embedded-main.js', import.meta.url).pathname;

const problems = configProblems;

test('defaults follow design.md §6', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.adminPort, 8081);
  assert.equal(config.publicUrl.origin, 'http://localhost:8080');
  assert.equal(config.databasePath, './data/gateway.db');
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.oidc.scopes, 'openid profile email');
  assert.equal(config.oidc.groupsClaim, 'groups');
  assert.equal(config.sessionTtlMs, 8 * 3_600_000);
  assert.deepEqual(config.rateLimitGeneral, { points: 100, durationMs: 15 * 60_000 });
  assert.deepEqual(config.rateLimitAuth, { points: 5, durationMs: 15 * 60_000 });
  assert.equal(config.adminInternalUrl.href, 'http://127.0.0.1:8081/');
  assert.equal(config.internalPort, 9090);
  assert.equal(config.logLevel, 'info');
  assert.equal(config.assertionTtlMs, 5 * 60_000);
  assert.equal(config.assertionKeyLifetimeMs, 30 * 86_400_000);
});

test('human forms: durations, limits, 0 turns a limiter off, lists', () => {
  const config = loadConfig({
    SESSION_TTL: '30m',
    RATE_LIMIT_GENERAL: '0',
    RATE_LIMIT_AUTH: '10/1h',
    ADMIN_EMAILS: 'A@Example.com, b@example.com',
    ADMIN_GROUPS: 'ops,admins',
    TRUST_PROXY: 'loopback, 10.0.0.0/8',
    ADMIN_PORT: '9000',
    ASSERTION_TTL: '90s',
    ASSERTION_KEY_LIFETIME: '7d',
  });
  assert.equal(config.sessionTtlMs, 30 * 60_000);
  assert.equal(config.rateLimitGeneral, null);
  assert.deepEqual(config.rateLimitAuth, { points: 10, durationMs: 3_600_000 });
  assert.deepEqual([...config.admins.emails], ['a@example.com', 'b@example.com']);
  assert.deepEqual([...config.admins.groups], ['ops', 'admins']);
  assert.deepEqual(config.trustProxy.entries, ['loopback', '10.0.0.0/8']);
  assert.equal(config.adminInternalUrl.href, 'http://127.0.0.1:9000/');
  assert.equal(config.assertionTtlMs, 90_000);
  assert.equal(config.assertionKeyLifetimeMs, 7 * 86_400_000);
});

test('each malformed value is reported on one line naming the variable', () => {
  assert.deepEqual(problems({ PORT: 'eighty' }), ['PORT: must be a port number (0-65535)']);
  assert.deepEqual(problems({ SESSION_TTL: '8 hours' }), ['SESSION_TTL: must be a duration such as 30s, 15m, 8h or 7d']);
  assert.deepEqual(problems({ RATE_LIMIT_GENERAL: '100 per minute' }), [
    'RATE_LIMIT_GENERAL: must be <requests>/<window> such as 100/15m, or 0 to turn it off',
  ]);
  assert.deepEqual(problems({ OIDC_ISSUER: 'ftp://idp.example.com' }), ['OIDC_ISSUER: must be an http: or https: URL']);
  assert.deepEqual(problems({ PUBLIC_URL: 'https://gw.example.com/app' }), ['PUBLIC_URL: must be an origin without path, query or fragment']);
  assert.deepEqual(problems({ OIDC_SCOPES: 'profile email' }), ['OIDC_SCOPES: must include openid']);
  assert.deepEqual(problems({ ASSERTION_TTL: '1500ms' }), ['ASSERTION_TTL: must be whole seconds, at least 1s']);
  assert.deepEqual(problems({ ASSERTION_TTL: '500ms' }), ['ASSERTION_TTL: must be whole seconds, at least 1s']);
  assert.deepEqual(problems({ ASSERTION_KEY_LIFETIME: 'monthly' }), ['ASSERTION_KEY_LIFETIME: must be a duration such as 30s, 15m, 8h or 7d']);
  assert.deepEqual(problems({ LOG_LEVEL: 'loud', PORT: '70000' }).sort(), [
    'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
    'PORT: must be a port number (0-65535)',
  ]);
});

test('npm start stops with one line naming a bad variable', () => {
  const run = spawnSync(process.execPath, [MAIN], { env: { ...process.env, SESSION_TTL: 'forever' }, encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.equal(run.stderr.trim(), 'gatehouse: SESSION_TTL: must be a duration such as 30s, 15m, 8h or 7d');
});

test('npm start without OIDC_ISSUER says how to configure one or to use the demo', () => {
  const env = { ...process.env };
  delete env.OIDC_ISSUER;
  delete env.OIDC_CLIENT_ID;
  const run = spawnSync(process.execPath, [MAIN], { env, encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /OIDC_ISSUER/);
  assert.match(run.stderr, /npm run demo/);
});

test('the README configuration table lists every variable with its default', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  for (const variable of VARIABLES) {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${variable.name}\``));
    assert.ok(row, `README lacks a row for ${variable.name}`);
    const shown = variable.default === undefined || variable.default === '' ? '(unset)' : `\`${variable.default}\``;
    assert.ok(row.includes(`| ${shown} |`), `README row for ${variable.name} should show default ${shown}: ${row}`);
  }
});

test('a TRUST_PROXY entry that is no address, CIDR or name stops the start, naming the variable', () => {
  assert.throws(() => loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/99' }), /TRUST_PROXY: must be addresses, CIDRs or names/);
});

test('OIDC_API_AUDIENCES: a comma-separated list, off when unset, and only beside OIDC_ISSUER', () => {
  assert.deepEqual(loadConfig({}).oidc.apiAudiences, []);
  const config = loadConfig({ OIDC_ISSUER: 'https://idp.example.com', OIDC_API_AUDIENCES: 'https://api.example.com, orders-api' });
  assert.deepEqual(config.oidc.apiAudiences, ['https://api.example.com', 'orders-api']);
  assert.deepEqual(problems({ OIDC_API_AUDIENCES: 'https://api.example.com' }), [
    'OIDC_API_AUDIENCES: needs OIDC_ISSUER, the identity provider whose tokens are accepted',
  ]);
});

test('session checks: 5m and 1h by default, no idle timeout, no key; any duration from 1s; a bad key is named, never echoed', () => {
  const defaults = loadConfig({});
  assert.deepEqual(defaults.sessionChecks, { revalidateMs: 5 * 60_000, graceMs: 3_600_000, idleTimeoutMs: undefined });
  assert.deepEqual(defaults.sessionEncryptionKeys, []);
  const [key, older] = [randomBytes(32), randomBytes(32)];
  const set = loadConfig({ SESSION_REVALIDATE: '1s', SESSION_REVALIDATE_GRACE: '3s', SESSION_IDLE_TIMEOUT: '30m', SESSION_ENCRYPTION_KEY: `${key.toString('hex')}, ${older.toString('base64')}` });
  assert.deepEqual(set.sessionChecks, { revalidateMs: 1_000, graceMs: 3_000, idleTimeoutMs: 30 * 60_000 });
  assert.deepEqual(set.sessionEncryptionKeys, [key, older]);
  const secretish = 'c2hvcnQta2V5LXRoYXQtaXMtbm90LTMyLWJ5dGVz';
  const found = problems({ SESSION_REVALIDATE: '0s', SESSION_IDLE_TIMEOUT: 'soon', SESSION_ENCRYPTION_KEY: secretish });
  assert.deepEqual(found.map((line) => line.split(':')[0]).sort(), ['SESSION_ENCRYPTION_KEY', 'SESSION_IDLE_TIMEOUT', 'SESSION_REVALIDATE']);
  assert.ok(!found.join('\n').includes(secretish), found.join('\n'));
});

test('Redis: one node, a Sentinel group or a Cluster, never two; each mode named when it is wrong; TLS files read at start', () => {
  assert.equal(loadConfig({}).redis, undefined);
  assert.deepEqual(loadConfig({ REDIS_URL: 'redis://10.0.0.9:6379/2', REDIS_PASSWORD: 'pw' }).redis, { kind: 'single', url: 'redis://10.0.0.9:6379/2', username: undefined, password: 'pw', tls: undefined });
  const sentinel = loadConfig({ REDIS_SENTINELS: 'sentinel-1:26379, [::1]:26380', REDIS_SENTINEL_NAME: 'gatehouse', REDIS_USERNAME: 'gw' }).redis;
  assert.deepEqual(sentinel, {
    kind: 'sentinel',
    sentinels: [{ host: 'sentinel-1', port: 26379 }, { host: '::1', port: 26380 }],
    name: 'gatehouse',
    sentinelPassword: undefined,
    username: 'gw',
    password: undefined,
    tls: undefined,
  });
  const both = problems({ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: 'b:26379', REDIS_SENTINEL_NAME: 'g', REDIS_PASSWORD: 'do-not-echo' });
  assert.equal(both.length, 1);
  assert.match(both[0]!, /^REDIS_URL, REDIS_SENTINELS: set one of them, not both/);
  assert.ok(!both.join('').includes('do-not-echo'));
  assert.match(problems({ REDIS_SENTINELS: 'b:26379' }).join('\n'), /^REDIS_SENTINEL_NAME: must name the group/m);
  assert.match(problems({ REDIS_SENTINELS: 'b', REDIS_SENTINEL_NAME: 'g' }).join('\n'), /^REDIS_SENTINELS: must be host:port pairs/m);
  assert.match(problems({ REDIS_URL: 'redis://a:6379', REDIS_TLS: 'true' }).join('\n'), /^REDIS_TLS: with REDIS_URL, TLS is asked for by a rediss:\/\/ URL/m);
  assert.match(problems({ REDIS_URL: 'rediss://a:6379', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }).join('\n'), /^REDIS_TLS_CA_FILE: cannot read \/nonexistent\/ca.pem \(ENOENT\)/m);
  assert.match(problems({ REDIS_SENTINELS: 'b:1', REDIS_SENTINEL_NAME: 'g', REDIS_TLS: 'true', REDIS_TLS_CERT_FILE: MAIN }).join('\n'), /^REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE: mutual TLS needs both/m);
  const tls = loadConfig({ REDIS_SENTINELS: 'b:1', REDIS_SENTINEL_NAME: 'g', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: MAIN }).redis!.tls!;
  assert.deepEqual(tls.ca, readFileSync(MAIN));

  const cluster = loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.5:6379,10.0.0.6:6380', REDIS_PASSWORD: 'pw', REDIS_TLS: 'true', REDIS_TLS_CA_FILE: MAIN }).redis!;
  assert.equal(cluster.kind, 'cluster');
  assert.deepEqual(cluster.kind === 'cluster' && cluster.nodes, [{ host: '10.0.0.5', port: 6379 }, { host: '10.0.0.6', port: 6380 }]);
  assert.equal(cluster.password, 'pw');
  assert.deepEqual(cluster.tls!.ca, readFileSync(MAIN));
  assert.match(problems({ REDIS_CLUSTER_NODES: '10.0.0.5' }).join('\n'), /^REDIS_CLUSTER_NODES: must be host:port pairs/m);
  assert.deepEqual(problems({ REDIS_SENTINELS: 'b:26379', REDIS_SENTINEL_NAME: 'g', REDIS_CLUSTER_NODES: 'c:6379' }), [
    'REDIS_SENTINELS, REDIS_CLUSTER_NODES: set one of them, not both (a group Redis Sentinel monitors, or a Redis Cluster)',
  ]);
  assert.match(problems({ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: 'b:26379', REDIS_CLUSTER_NODES: 'c:6379' }).join('\n'), /^REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: set one of them, not several/);
});
