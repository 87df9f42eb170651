/**
 * A real upstream process that verifies the gateway's identity assertion the way README
 * "Identity assertion" tells upstreams to (verifying-upstream-main.ts), for tests that the
 * assertion holds up outside the gateway's own process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import type { Verdict } from './verifying-upstream-main.js';

export type { Verdict };

const MAIN = new URL('./verifying-upstream-main.js', import.meta.url).pathname;

export interface VerifyingUpstream {
  /** `http://127.0.0.1:<port>`: the targetUrl of the service it stands behind. */
  origin: string;
  /** Sends it a request straight (not through the gateway) with `assertion` as `X-Gatehouse-Assertion`, as a replay would. */
  verify(assertion: string): Promise<{ status: number; verdict: Verdict }>;
  /** Stops the process. */
  close(): Promise<void>;
}

/**
 * Starts the process for `gateway` (PUBLIC_URL's origin) and `audience` (its service's public
 * URL); resolves once it listens.
 * @throws when it exits before listening.
 */
export async function startVerifyingUpstream(gateway: string, audience: string): Promise<VerifyingUpstream> {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, GATEWAY: gateway, AUDIENCE: audience }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await listeningPort(child).catch(async (error: unknown) => {
    await stop(child);
    throw error;
  });
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    async verify(assertion) {
      const response = await request(`${origin}/`, { headers: { 'x-gatehouse-assertion': assertion } });
      return { status: response.statusCode, verdict: (await response.body.json()) as Verdict };
    },
    close: () => stop(child),
  };
}

/** The port from the `listening <port>` line. @throws when the process exits first. */
async function listeningPort(child: ChildProcess): Promise<number> {
  const exited = once(child, 'exit').then(() => undefined);
  const listening = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      const match = /^listening (\d+)$/.exec(line);
      if (match) return Number(match[1]);
    }
    return undefined;
  })();
  const port = await Promise.race([listening, exited]);
  if (port === undefined) throw new Error('the verifying upstream stopped before listening');
  return port;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill();
  await exited;
}
