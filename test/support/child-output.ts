/**
 * Test upstreams that run as child processes (python3 -m http.server, the verifying upstream):
 * the port they print once listening, and stopping them.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/**
 * The port from the first line of `child`'s stdout that `pattern` matches (its group 1).
 * @throws naming `what` when the process exits or closes its output first.
 */
export async function announcedPort(child: ChildProcess, pattern: RegExp, what: string): Promise<number> {
  const exited = once(child, 'exit').then(() => undefined);
  const announced = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) {
      const match = pattern.exec(line);
      if (match) return Number(match[1]);
    }
    return undefined;
  })();
  const port = await Promise.race([announced, exited]);
  if (port === undefined) throw new Error(`${what} stopped before listening`);
  return port;
}

/** Stops `child` (SIGTERM) and waits for it to exit; nothing when it already has. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill();
  await exited;
}
