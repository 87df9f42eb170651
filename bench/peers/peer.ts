/**
 * A reference system the gateway is compared with (Caddy, Apache httpd + mod_auth_openidc): where
 * to send the load, and how to start, find and stop it. Started each run on the bench upstream and
 * the same protected route as the gateway, with a logged-in session where it authenticates.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';

export interface Peer {
  /** Row label, e.g. `caddy`. */
  readonly name: string;
  /** The protected route's URL, e.g. `http://127.0.0.1:PORT/protected/bench`. */
  readonly url: string;
  /** Request headers of a signed-in client (a session cookie), if it authenticates. */
  readonly headers?: Record<string, string>;
  stop(): Promise<void>;
}

/** A peer that could not be started this run, and why (the report says so and goes on). */
export interface MissingPeer {
  readonly name: string;
  readonly reason: string;
}

/**
 * Makes sure `binary` exists, installing Debian's `packages` with apt-get when it does not.
 * @returns null when it is there, else why it is not.
 */
export async function ensureInstalled(binary: string, packages: string[]): Promise<string | null> {
  if (existsSync(binary)) return null;
  try {
    await promisify(execFile)('apt-get', ['install', '-y', '-q', ...packages], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000 });
  } catch (error) {
    return `${binary} missing and \`apt-get install ${packages.join(' ')}\` failed: ${(error as Error).message.split('\n')[0]}`;
  }
  return existsSync(binary) ? null : `${binary} missing after installing ${packages.join(' ')}`;
}

/**
 * Resolves once `url` answers 200 with `headers`; throws after `timeoutMs`. An https `url` is
 * verified against `caFile` (the bench's self-signed certificate) when given.
 */
export async function waitForOk(url: string, headers: Record<string, string> = {}, timeoutMs = 30_000, caFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  const dispatcher = caFile === undefined ? undefined : new Agent({ connect: { ca: readFileSync(caFile) } });
  try {
    while (Date.now() < deadline) {
      try {
        const response = dispatcher
          ? await undiciFetch(url, { headers, redirect: 'manual', dispatcher })
          : await fetch(url, { headers, redirect: 'manual' });
        await response.arrayBuffer();
        if (response.status === 200) return;
        last = `status ${response.status}`;
      } catch (error) {
        last = (error as Error).message;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await dispatcher?.close();
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${last})`);
}
