/**
 * Which process serves a TCP connection: for tests of node:cluster workers, which share one
 * listening port, so that a test can tell which worker a connection was handed to. Linux only
 * (`ss` of iproute2, which reads the processes' open sockets). Not a test file.
 */
import { spawnSync } from 'node:child_process';

/**
 * The pids of the processes holding the server end of the established connection from
 * 127.0.0.1:`clientPort` to port `serverPort` (a cluster's primary may still hold it for a moment
 * after handing it to a worker).
 * @throws when `ss` cannot run.
 */
export function connectionOwners(serverPort: number, clientPort: number): number[] {
  const run = spawnSync('ss', ['-tnpH', 'state', 'established', `( sport = :${serverPort} and dport = :${clientPort} )`], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ss failed: ${run.stderr || run.error?.message}`);
  return [...new Set([...run.stdout.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1])))];
}
