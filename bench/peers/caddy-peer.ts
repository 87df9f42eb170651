/**
 * Caddy (Debian package `caddy`) as a reference: its plain `reverse_proxy` under a `handle_path`
 * prefix (the prefix stripped, as the gateway does), no authentication, logs discarded, admin
 * endpoint off. `GOMAXPROCS` is the worker count, so it uses as many cores as the Node proxies'
 * workers do.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/free-port.js';
import { ensureInstalled, waitForOk, type MissingPeer, type Peer } from './peer.js';
import { spawnProgram } from '../processes.js';
import { ROWS } from '../targets.js';

const CADDY = '/usr/bin/caddy';

/** Starts Caddy in front of `upstreamUrl` at `/protected/*`; a {@link MissingPeer} when it cannot. */
export async function startCaddy(workers: number, upstreamUrl: string, workDir: string): Promise<Peer | MissingPeer> {
  const name = ROWS.caddy;
  const missing = await ensureInstalled(CADDY, ['caddy']);
  if (missing) return { name, reason: missing };
  const port = await freePort();
  const dir = join(workDir, `caddy-${workers}w`);
  const caddyfile = join(workDir, `Caddyfile-${workers}w`);
  writeFileSync(caddyfile, [
    '{',
    '\tadmin off',
    '\tauto_https off',
    '\tlog {',
    '\t\toutput discard',
    '\t}',
    '}',
    `http://127.0.0.1:${port} {`,
    '\thandle_path /protected/* {',
    `\t\treverse_proxy ${new URL(upstreamUrl).host}`,
    '\t}',
    '}',
    '',
  ].join('\n'));
  try {
    const child = await spawnProgram(`caddy-${workers}w`, CADDY, ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
      env: { GOMAXPROCS: String(workers), HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      logDir: workDir,
    });
    const url = `http://127.0.0.1:${port}/protected/bench`;
    await waitForOk(url).catch(async (error: unknown) => {
      await child.stop();
      throw error;
    });
    return { name, url, stop: async () => void (await child.stop()) };
  } catch (error) {
    return { name, reason: `caddy did not start: ${(error as Error).message}` };
  }
}
