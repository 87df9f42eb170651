/**
 * Real ingress servers in front of the gateway for the verify endpoint's tests (design.md §4.19):
 * Debian's nginx (`auth_request`), Caddy (`forward_auth`) and HAProxy (a Lua action with
 * `core.httpclient`), each a child process (never a daemon) on a free port of 127.0.0.1 with the
 * configuration ingress-configs.ts writes into a temporary folder. Ready once the port accepts a
 * connection; stopped (SIGTERM) and the folder removed by `stop`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from './child-output.js';
import { eventually } from './eventually.js';
import { caddyConfig, haproxyConfig, haproxyLua, nginxConfig, type IngressSite } from './ingress-configs.js';

/** A running ingress. */
export interface Ingress {
  /** Which server it is (`nginx`, `caddy`, `haproxy`). */
  readonly name: string;
  /** `http://127.0.0.1:<port>`: PUBLIC_URL's origin in these tests. */
  readonly origin: string;
  readonly port: number;
  /** Its (main) process id. */
  readonly pid: number;
  /** Everything it wrote to stdout and stderr so far (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts one kind of ingress for `site`. */
export type IngressStarter = (site: IngressSite) => Promise<Ingress>;

/** nginx with the `auth_request` configuration (`-g 'daemon off;'`, its prefix in the temporary folder). */
export const startNginx: IngressStarter = (site) =>
  startIngress('nginx', site, (dir) => {
    writeFileSync(join(dir, 'nginx.conf'), nginxConfig(site, dir, process.getuid?.() === 0));
    return ['nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr', '-g', 'daemon off;']];
  });

/** Caddy with the `forward_auth` Caddyfile (`caddy run`, no admin endpoint, storage in the temporary folder). */
export const startCaddy: IngressStarter = (site) =>
  startIngress('caddy', site, (dir) => {
    writeFileSync(join(dir, 'Caddyfile'), caddyConfig(site, dir));
    return ['caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile']];
  });

/** HAProxy (≥ 2.5 for `core.httpclient`) with the Lua verify action, in the foreground (`-db`). */
export const startHaproxy: IngressStarter = (site) =>
  startIngress('haproxy', site, (dir) => {
    writeFileSync(join(dir, 'gatehouse-verify.lua'), haproxyLua());
    writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(site, dir));
    return ['haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')]];
  });

/**
 * Writes the configuration (`configure` returns the command and its arguments), spawns the server
 * and waits until its port takes connections.
 * @throws with its output when it exits first or is not listening within 10 s.
 */
async function startIngress(name: string, site: IngressSite, configure: (dir: string) => [string, string[]]): Promise<Ingress> {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  const [command, args] = configure(dir);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(`${name} to listen on ${site.port}`, () => accepts(site.port, child), 10_000, 25, (error) => (error as Error).message === 'exited');
  } catch (error) {
    await stop();
    throw new Error(`${name} did not start: ${(error as Error).message}\n${output}`);
  }
  return { name, origin: `http://127.0.0.1:${site.port}`, port: site.port, pid: child.pid!, output: () => output, stop };
}

/** True once `port` takes a TCP connection. @throws `exited` when `child` is gone (no use waiting). */
function accepts(port: number, child: ChildProcess): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error('exited'));
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
