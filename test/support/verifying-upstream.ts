/**
 * A real upstream process that verifies the gateway's identity assertion the way README
 * "Identity assertion" tells upstreams to (verifying-upstream-main.ts), for tests that the
 * assertion holds up outside the gateway's own process.
 */
import { spawn } from 'node:child_process';
import { request } from 'undici';
import type { Verdict } from './verifying-upstream-main.js';
import { announcedPort, stopChild } from './child-output.js';

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
  const port = await announcedPort(child, /^listening (\d+)$/, 'the verifying upstream').catch(async (error: unknown) => {
    await stopChild(child);
    throw error;
  });
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    async verify(assertion) {
      const response = await request(`${origin}/`, { headers: { 'x-gatehouse-assertion': assertion } });
      return { status: response.statusCode, verdict: (await response.body.json()) as Verdict };
    },
    close: () => stopChild(child),
  };
}
