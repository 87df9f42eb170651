import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { eventually } from './eventually.js';

const DIST = new URL('../../', import.meta.url).pathname;

/** A Gatehouse process started from its compiled entry point, as `npm run start:*` would. */
export interface GatehouseProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code once the process has exited on its own. */
  exited: Promise<number | null>;
}

/** How to start it beyond its settings. */
export interface GatehouseProcessOptions {
  /**
   * A command that runs node for it, node's path and arguments appended (`['ip', 'netns', 'exec',
   * '<namespace>']` runs it on another host of a test network); default none: node itself. The
   * command must exec node, so that signals reach the Gatehouse process.
   */
  prefix?: readonly string[];
}

/**
 * Spawns `dist/<entry>` (e.g. `admin/process/main.js`, `proxy/process/main.js`) with `env` on top
 * of this process's environment.
 */
export function startGatehouseProcess(entry: string, env: Record<string, string>, options: GatehouseProcessOptions = {}): GatehouseProcess {
  const [command, ...args] = [...(options.prefix ?? []), process.execPath, `${DIST}${entry}`];
  const child = spawn(command!, args, { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    exited,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Resolves once `ready` holds for `process` (checked as {@link eventually} does, up to `timeoutMs`);
 * rejects at once if the process exits first, and either way with its output in the error, so a
 * start that failed (a port taken, a bad setting) says why instead of timing out.
 */
export async function untilReady(process: GatehouseProcess, what: string, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  let exitCode: number | null | undefined;
  void process.exited.then((code) => (exitCode = code));
  try {
    await eventually(what, async () => {
      if (exitCode !== undefined) throw new ExitedEarly(exitCode);
      return ready();
    }, timeoutMs, 25, (error) => error instanceof ExitedEarly);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${process.output()}`, { cause: error });
  }
}

/** A process gone before it was ready (stops {@link eventually} at once). */
class ExitedEarly extends Error {
  constructor(code: number | null) {
    super(`it exited (code ${code}) before it was ready`);
  }
}

/** Whether a failed start was a port taken meanwhile (free ports are found before listening). */
export function portWasTaken(error: unknown): boolean {
  return error instanceof Error && error.message.includes('EADDRINUSE');
}

/** The pids of a process's children (Linux: /proc/<pid>/task/<pid>/children), e.g. a proxy primary's workers. */
export function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** Whether process `pid` is gone (signal 0 finds no such process). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The status of a GET (body discarded). */
export async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await request(url, { headers });
  await response.body.dump();
  return response.statusCode;
}
