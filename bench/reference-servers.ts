/**
 * The two servers the gateway is compared against, started as child processes: the bench
 * upstream (bench-upstream.ts), which every proxy forwards to, and the baseline proxy
 * (baseline-proxy.ts).
 */
import { freePort } from '../test/support/free-port.js';
import { spawnNode, type NodeChild } from './processes.js';

export interface ReferenceServer {
  /** Origin, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  child: NodeChild;
}

/** Starts the bench upstream on a free port. */
export async function startBenchUpstream(workDir: string): Promise<ReferenceServer> {
  const port = await freePort();
  const child = await spawnNode('bench-upstream', 'bench/bench-upstream.js', { env: { PORT: String(port) }, logDir: workDir, readyLine: /"ready":true/ });
  return { url: `http://127.0.0.1:${port}`, child };
}

/**
 * Starts the baseline proxy with `workers` workers (node:cluster) in front of `upstreamUrl`;
 * `nodeArgs` are extra `node` flags (the profiler's `--cpu-prof`).
 */
export async function startBaselineProxy(workers: number, upstreamUrl: string, workDir: string, nodeArgs: string[] = []): Promise<ReferenceServer> {
  const port = await freePort();
  const child = await spawnNode(`baseline-${workers}w`, 'bench/baseline-proxy.js', {
    env: { PORT: String(port), UPSTREAM_URL: upstreamUrl, WORKERS: String(workers) },
    logDir: workDir,
    readyLine: /"ready":true/,
    nodeArgs,
  });
  return { url: `http://127.0.0.1:${port}`, child };
}
