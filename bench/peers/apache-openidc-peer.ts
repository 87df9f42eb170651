/**
 * Apache httpd + mod_auth_openidc (Debian packages `apache2`, `libapache2-mod-auth-openidc`) as a
 * reference: the authenticating reverse proxy most deployments use. mpm_event with `workers`
 * processes of 64 threads (the load's 64 connections fit one process), `mod_proxy_http` to the
 * upstream under `/protected/` (the prefix stripped), sessions in its own redis-server
 * (`OIDCCacheType redis`, the server-side session cache), against the bench's own OpenID Provider
 * (test/support/identity-provider.ts, in this process), signed in once through the provider's
 * login and consent pages like a browser; the load then sends that session cookie. Nothing is
 * refreshed per request (no userinfo or token refresh), so a request is: session from Redis, then
 * the proxied exchange, as in a plain deployment. Its access log is off, as Caddy's is.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browse, CookieJar } from '../../test/support/browserless-login.js';
import { freePort } from '../../test/support/free-port.js';
import { DEMO_USERS, startIdentityProvider, type IdentityProvider } from '../../test/support/identity-provider.js';
import { startRedis, type RedisServer } from '../../test/support/redis.js';
import { ensureInstalled, waitForOk, type MissingPeer, type Peer } from './peer.js';
import { spawnProgram, type NodeChild } from '../processes.js';
import { APACHE_REDIS_ROLE, nameProcess, processesMatching } from '../process-stats.js';
import { ROWS } from '../targets.js';

const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const CLIENT = { clientId: 'apache-bench', clientSecret: randomBytes(16).toString('hex') };

/** Starts Apache + mod_auth_openidc in front of `upstreamUrl` and signs in; a {@link MissingPeer} when it cannot. */
export async function startApacheOpenidc(workers: number, upstreamUrl: string, workDir: string): Promise<Peer | MissingPeer> {
  const name = ROWS.apache;
  const missing = (await ensureInstalled(APACHE, ['apache2'])) ?? (await ensureInstalled(join(MODULES, 'mod_auth_openidc.so'), ['libapache2-mod-auth-openidc']));
  if (missing) return { name, reason: missing };
  const parts: { provider?: IdentityProvider; redis?: RedisServer; httpd?: NodeChild } = {};
  // Its own folder, readable by the `www-data` children (the run's work folder is private).
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-bench-apache-${workers}w-`));
  chmodSync(dir, 0o755);
  const stop = async () => {
    await parts.httpd?.stop();
    await parts.redis?.stop();
    await parts.provider?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    parts.redis = await startRedis();
    for (const pid of processesMatching((command) => command.startsWith('redis-server') && command.includes(`:${parts.redis!.port}`))) nameProcess(pid, APACHE_REDIS_ROLE);
    parts.provider = await startIdentityProvider({
      clients: [{ ...CLIENT, redirectUris: [`${origin}/protected/redirect_uri`], postLogoutRedirectUris: [] }],
    });
    const conf = writeConfig(workers, port, parts.provider.issuer, parts.redis.port, upstreamUrl, dir);
    parts.httpd = await spawnProgram(`apache-${workers}w`, APACHE, ['-f', conf, '-DFOREGROUND'], { env: {}, logDir: workDir });
    const url = `${origin}/protected/bench`;
    const headers = { cookie: await signIn(url, parts.httpd) };
    await waitForOk(url, headers);
    return { name, url, headers, stop };
  } catch (error) {
    await stop();
    return { name, reason: `apache + mod_auth_openidc did not start: ${(error as Error).message}` };
  }
}

/** Walks the sign-in from the protected URL as a browser would; returns the session's `Cookie` header. */
async function signIn(url: string, httpd: NodeChild): Promise<string> {
  const user = DEMO_USERS[1]!;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const jar = new CookieJar();
    try {
      const result = await browse(url, jar, { email: user.email, password: user.password });
      const cookie = jar.header(url, { method: 'GET' });
      if (result.status === 302 && cookie.includes('mod_auth_openidc_session')) return cookie;
      throw new Error(`sign-in ended with ${result.status} at ${result.url}: ${result.body.slice(0, 300)}`);
    } catch (error) {
      if (httpd.exited) throw new Error(`httpd exited (log: ${httpd.logPath})`);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200)); // httpd still starting
    }
  }
}

/** Writes the httpd configuration into `dir` (also its runtime folder and error log); returns its path. */
function writeConfig(workers: number, port: number, issuer: string, redisPort: number, upstreamUrl: string, dir: string): string {
  const upstream = new URL(upstreamUrl).host;
  const modules = ['mpm_event', 'authz_core', 'authz_user', 'authn_core', 'proxy', 'proxy_http', 'auth_openidc'];
  const lines = [
    ...modules.map((module) => `LoadModule ${module}_module ${MODULES}/mod_${module}.so`),
    `ServerRoot ${dir}`,
    `DefaultRuntimeDir ${dir}`,
    `PidFile ${dir}/httpd.pid`,
    `ErrorLog ${dir}/error.log`,
    'LogLevel warn',
    ...(process.getuid?.() === 0 ? ['User www-data', 'Group www-data'] : []),
    'ServerName 127.0.0.1',
    `Listen 127.0.0.1:${port}`,
    `StartServers ${workers}`,
    `ServerLimit ${workers}`,
    'ThreadsPerChild 64',
    'ThreadLimit 64',
    `MaxRequestWorkers ${64 * workers}`,
    `MinSpareThreads ${64 * workers}`,
    `MaxSpareThreads ${64 * workers}`,
    'MaxConnectionsPerChild 0',
    'KeepAlive On',
    'MaxKeepAliveRequests 0',
    `OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration`,
    `OIDCClientID ${CLIENT.clientId}`,
    `OIDCClientSecret ${CLIENT.clientSecret}`,
    `OIDCRedirectURI http://127.0.0.1:${port}/protected/redirect_uri`,
    `OIDCCryptoPassphrase ${randomBytes(16).toString('hex')}`,
    'OIDCScope "openid email"',
    'OIDCPKCEMethod S256',
    'OIDCCacheType redis',
    `OIDCRedisCacheServer 127.0.0.1:${redisPort}`,
    'OIDCSessionInactivityTimeout 3600',
    'OIDCSSLValidateServer Off',
    '<Location /protected/>',
    '  AuthType openid-connect',
    '  Require valid-user',
    `  ProxyPass http://${upstream}/`,
    '</Location>',
    '',
  ];
  const path = join(dir, 'httpd.conf');
  writeFileSync(path, lines.join('\n'));
  return path;
}
