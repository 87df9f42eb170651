/**
 * The servers the gateway is compared against, started as child processes: the bench upstream
 * (bench-upstream.ts), which every proxy forwards to, the baseline proxy (baseline-proxy.ts), and
 * the gRPC rows' target (grpc-target.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/support/free-port.js';
import { spawnNode, type NodeChild } from './processes.js';

export interface ReferenceServer {
  /** Origin, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  child: NodeChild;
}

/** The bench upstream: one process answering on several ports. */
export interface BenchUpstream extends ReferenceServer {
  /** Three origins of the same process (`url` first): the targets of the bench's pool. */
  poolUrls: string[];
}

/**
 * Starts the bench upstream on three free ports: one process, so a pool of three targets costs
 * the upstream side what one target does, and only the gateway's side of it is measured.
 */
export async function startBenchUpstream(workDir: string): Promise<BenchUpstream> {
  const ports = [await freePort(), await freePort(), await freePort()];
  const env = { PORT: String(ports[0]), EXTRA_PORTS: ports.slice(1).join(',') };
  const child = await spawnNode('bench-upstream', 'bench/bench-upstream.js', { env, logDir: workDir, readyLine: /"ready":true/ });
  const poolUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  return { url: poolUrls[0]!, poolUrls, child };
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

/** Starts the gRPC target (grpc-target.ts); its `url` is `h2c://127.0.0.1:PORT`, a service's target url as it is. */
export async function startGrpcTargetProcess(workDir: string): Promise<ReferenceServer> {
  const urlFile = join(workDir, 'grpc-target.url');
  const child = await spawnNode('grpc-target', 'bench/grpc-target.js', { env: { URL_FILE: urlFile }, logDir: workDir, readyLine: /"ready":true/ });
  return { url: readFileSync(urlFile, 'utf8'), child };
}
