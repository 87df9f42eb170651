/**
 * Caddy (Debian package `caddy`) as a reference: its plain `reverse_proxy` under a `handle_path`
 * prefix (the prefix stripped, as the gateway does), no authentication, logs discarded, admin
 * endpoint off. `GOMAXPROCS` is the worker count, so it uses as many cores as the Node proxies'
 * workers do. With `tls` (the TLS row), it serves HTTPS with that certificate (`tls <cert> <key>`,
 * no certificate management: `auto_https off`; `default_sni` so that clients connecting to the IP
 * without SNI, as autocannon does, get it), row `caddy, https`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/free-port.js';
import { ensureInstalled, waitForOk, type MissingPeer, type Peer } from './peer.js';
import { spawnProgram } from '../processes.js';
import { ROWS } from '../targets.js';
import type { BenchCertificate } from '../tls-certificate.js';

const CADDY = '/usr/bin/caddy';

/**
 * Starts Caddy in front of `upstreamUrl` at `/protected/*` (over HTTPS with `tls`); a
 * {@link MissingPeer} when it cannot.
 */
export async function startCaddy(workers: number, upstreamUrl: string, workDir: string, tls?: BenchCertificate): Promise<Peer | MissingPeer> {
  const name = tls ? ROWS.caddyHttps : ROWS.caddy;
  const missing = await ensureInstalled(CADDY, ['caddy']);
  if (missing) return { name, reason: missing };
  const port = await freePort();
  const label = `caddy${tls ? '-https' : ''}-${workers}w`;
  const dir = join(workDir, label);
  const caddyfile = join(workDir, `Caddyfile-${label}`);
  const origin = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  writeFileSync(caddyfile, [
    '{',
    '\tadmin off',
    '\tauto_https off',
    ...(tls ? ['\tdefault_sni 127.0.0.1'] : []),
    '\tlog {',
    '\t\toutput discard',
    '\t}',
    '}',
    `${origin} {`,
    ...(tls ? [`\ttls ${tls.certFile} ${tls.keyFile}`] : []),
    '\thandle_path /protected/* {',
    `\t\treverse_proxy ${new URL(upstreamUrl).host}`,
    '\t}',
    '}',
    '',
  ].join('\n'));
  try {
    const child = await spawnProgram(label, CADDY, ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
      env: { GOMAXPROCS: String(workers), HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      logDir: workDir,
    });
    const url = `${origin}/protected/bench`;
    await waitForOk(url, {}, 30_000, tls?.certFile).catch(async (error: unknown) => {
      await child.stop();
      throw error;
    });
    return { name, url, stop: async () => void (await child.stop()) };
  } catch (error) {
    return { name, reason: `caddy did not start: ${(error as Error).message}` };
  }
}
