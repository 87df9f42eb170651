import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import type { Logger } from '../../shared/logger.js';
import type { WorkerMessage } from './cluster-worker.js';
import { RestartBackoff } from './restart-backoff.js';

export interface WorkerPoolOptions {
  /** How many workers (PROXY_WORKERS). */
  size: number;
  logger: Logger;
  /** Delays between restarts (default: 100 ms doubling to 10 s, reset after a minute). */
  backoff?: RestartBackoff;
  /** Told each time a worker that died is replaced (for `gatehouse_worker_restarts_total`). */
  onRestart?(): void;
}

/** How the pool's start failed: the first worker that exited before listening, and why. */
export class WorkerStartError extends Error {
  readonly code = 'WORKER_START_FAILED';
}

/**
 * The node:cluster workers of the proxy primary (README "Production topology"), forked at once:
 * - Start: {@link started} resolves once every worker listens on PORT. A worker that exits before
 *   that is a start failure (a setting, PORT taken, Redis unreachable): {@link started} rejects
 *   with the worker's own error and nothing is restarted, so the primary can exit 1 and say why.
 * - Running: a worker that dies is replaced after a {@link RestartBackoff} delay, and counted.
 * - Stop: {@link stop} sends SIGTERM to every worker and resolves once all have exited.
 * Workers are tracked here, not through `cluster.workers`, which may still list a worker at its
 * 'exit' when its IPC channel has not closed yet.
 */
export class WorkerPool {
  /** Resolves once every worker of the first round listens; rejects with {@link WorkerStartError}. */
  readonly started: Promise<void>;
  readonly #size: number;
  readonly #logger: Logger;
  readonly #backoff: RestartBackoff;
  readonly #onRestart: () => void;
  readonly #live = new Map<number, Worker>();
  readonly #listening = new Set<number>();
  readonly #ready = new Set<number>();
  readonly #startFailures = new Map<number, string>();
  readonly #restarts = new Set<NodeJS.Timeout>();
  #phase: 'starting' | 'running' | 'stopping' = 'starting';
  #settleStart: { resolve(): void; reject(error: Error): void } | undefined;
  #allExited: (() => void) | undefined;
  #stopping: Promise<boolean> | undefined;
  #unclean = 0;

  constructor(options: WorkerPoolOptions) {
    this.#size = options.size;
    this.#logger = options.logger;
    this.#backoff = options.backoff ?? new RestartBackoff();
    this.#onRestart = options.onRestart ?? (() => {});
    this.started = new Promise((resolve, reject) => (this.#settleStart = { resolve, reject }));
    cluster.on('message', (worker, message: WorkerMessage) => this.#message(worker, message));
    cluster.on('exit', (worker, code, signal) => void this.#afterMessages(worker).then(() => this.#exited(worker, code, signal)));
    for (let i = 0; i < this.#size; i++) this.#fork();
  }

  /** Whether every worker has loaded its first registry snapshot and assertion key set (for `/readyz`). */
  get ready(): boolean {
    return this.#ready.size === this.#size;
  }

  /**
   * Stops restarting, sends SIGTERM to every worker, and resolves once all have exited: true when
   * each exited 0 (or by that SIGTERM, before it could handle it), false otherwise. Calling it
   * again returns the same promise.
   */
  stop(): Promise<boolean> {
    return (this.#stopping ??= this.#stopAll());
  }

  async #stopAll(): Promise<boolean> {
    this.#phase = 'stopping';
    for (const timer of this.#restarts) clearTimeout(timer);
    this.#restarts.clear();
    const allExited = new Promise<void>((resolve) => (this.#allExited = resolve));
    for (const worker of this.#live.values()) worker.process.kill('SIGTERM');
    if (this.#live.size > 0) await allExited;
    return this.#unclean === 0;
  }

  /** SIGKILL to every worker still running (a stop that overran its deadline). */
  kill(): void {
    for (const worker of this.#live.values()) worker.process.kill('SIGKILL');
  }

  #fork(): void {
    const worker = cluster.fork();
    this.#live.set(worker.id, worker);
  }

  #message(worker: Worker, message: WorkerMessage): void {
    if (message?.type === 'gatehouse:ready') this.#ready.add(worker.id);
    else if (message?.type === 'gatehouse:start-failed') this.#startFailures.set(worker.id, message.reason);
    else if (message?.type === 'gatehouse:listening') this.#listened(worker);
  }

  #listened(worker: Worker): void {
    this.#listening.add(worker.id);
    if (this.#phase !== 'starting' || this.#listening.size < this.#size) return;
    this.#phase = 'running';
    this.#settleStart?.resolve();
  }

  /** Resolves once `worker`'s IPC channel is closed, so every message it sent has been handled. */
  async #afterMessages(worker: Worker): Promise<void> {
    if (worker.isConnected()) await once(worker, 'disconnect');
  }

  #exited(worker: Worker, code: number | null, signal: string | null): void {
    this.#live.delete(worker.id);
    this.#listening.delete(worker.id);
    this.#ready.delete(worker.id);
    const reason = this.#startFailures.get(worker.id);
    this.#startFailures.delete(worker.id);
    if (this.#phase === 'stopping') {
      if (code !== 0 && signal !== 'SIGTERM') this.#unclean++;
      if (this.#live.size === 0) this.#allExited?.();
    } else if (this.#phase === 'starting') {
      this.#settleStart?.reject(new WorkerStartError(reason ?? `a worker exited (${signal ?? `code ${code}`}) before it was listening`));
    } else {
      this.#scheduleRestart({ pid: worker.process.pid, code, signal, reason });
    }
  }

  #scheduleRestart(death: { pid: number | undefined; code: number | null; signal: string | null; reason: string | undefined }): void {
    const delayMs = this.#backoff.next();
    this.#logger.error({ ...death, restartInMs: delayMs }, 'proxy worker died; starting another');
    const timer = setTimeout(() => {
      this.#restarts.delete(timer);
      this.#onRestart();
      this.#fork();
    }, delayMs);
    this.#restarts.add(timer);
  }
}
