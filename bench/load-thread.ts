/**
 * The load thread: a closed-loop client autocannon does not offer (HTTP/2 streams,
 * http2-load.ts; gRPC unary calls, grpc-load.ts) run in a worker thread of the bench process, one
 * thread per run. Its CPU is the bench process's (role `load generator` in the CPU tables), never a
 * measured server's, and its event loop is its own, not the bench's.
 *
 * This file is both sides: {@link runInLoadThread} in the bench, and the thread's body when loaded
 * as a worker.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { GrpcLoadOptions } from './grpc-load.js';
import type { Http2LoadOptions } from './http2-load.js';
import type { LoadResult } from './load.js';

/** A run for the load thread. */
export type ThreadLoad = { kind: 'h2'; options: Http2LoadOptions } | { kind: 'grpc'; options: GrpcLoadOptions };

/**
 * Runs `load` in a new worker thread and resolves with its result; the thread is ended then (a
 * client library's leftover timers cannot keep it alive).
 */
export async function runInLoadThread(load: ThreadLoad): Promise<LoadResult> {
  const worker = new Worker(new URL(import.meta.url), { workerData: load });
  try {
    return await new Promise<LoadResult>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the ${load.kind} load thread exited (${code}) without a result`)));
    });
  } finally {
    await worker.terminate();
  }
}

/** The thread's side: runs the load it was given and posts the result. */
async function runLoad(load: ThreadLoad): Promise<LoadResult> {
  if (load.kind === 'h2') return (await import('./http2-load.js')).runHttp2Load(load.options);
  return (await import('./grpc-load.js')).runGrpcLoad(load.options);
}

if (!isMainThread && (workerData as ThreadLoad | undefined)?.kind) {
  parentPort!.postMessage(await runLoad(workerData as ThreadLoad));
}
