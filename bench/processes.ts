/**
 * Child processes of the benchmark: servers run as `node dist/...` (or, for the reference peers,
 * their own programs) in their own processes, so the load generator (in the bench process) never
 * shares their event loop. Each child's stdout and
 * stderr go to a log file in the run's work folder; every child still running when the bench
 * exits, however it exits, is killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled tree's root (`dist/`), where every script path is resolved from. */
const DIST = fileURLToPath(new URL('..', import.meta.url));

/** How long a child may take to report it is ready, in ms. */
const READY_TIMEOUT_MS = 30_000;
/** How long a stopping child may take after SIGTERM before it is killed, in ms. */
const STOP_TIMEOUT_MS = 15_000;

export interface NodeChild {
  readonly name: string;
  readonly pid: number;
  /** Where its stdout and stderr go. */
  readonly logPath: string;
  /** True once it has exited. */
  readonly exited: boolean;
  /**
   * SIGTERM, then SIGKILL if it has not exited within {@link STOP_TIMEOUT_MS}. Resolves with its
   * exit code (null when killed by a signal).
   */
  stop(): Promise<number | null>;
}

export interface SpawnOptions {
  /** The child's environment, added to this process's. */
  env: Record<string, string>;
  /** Folder for the log file `<name>.log`. */
  logDir: string;
  /** Resolve once a line of its stdout matches this (otherwise as soon as it is spawned). */
  readyLine?: RegExp;
  /** Extra `node` flags, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
// Ctrl+C or a stop request: exit through the handler above, so no server is left behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/**
 * Starts `node <dist>/<script>` and resolves when it is ready.
 * @throws when it exits, or does not print `readyLine` within {@link READY_TIMEOUT_MS}; the error
 *   names its log file.
 */
export function spawnNode(name: string, script: string, options: SpawnOptions): Promise<NodeChild> {
  return spawnProgram(name, process.execPath, [...(options.nodeArgs ?? []), join(DIST, script)], options);
}

/**
 * Starts `command` with `args` (a peer such as `caddy`), its output logged and its stop handled
 * like a Node child's; resolves at once unless `options.readyLine` is given.
 * @throws as {@link spawnNode}.
 */
export async function spawnProgram(name: string, command: string, args: string[], options: SpawnOptions): Promise<NodeChild> {
  const logPath = join(options.logDir, `${name}.log`);
  const log = createWriteStream(logPath, { flags: 'a' });
  const child = spawn(command, args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.once('close', () => log.end());
  child.stderr!.pipe(log, { end: false });
  const ready = options.readyLine ? waitForLine(child, options.readyLine, `${name} (log: ${logPath})`) : Promise.resolve();
  const spawnFailed = once(child, 'error').then(([error]) => Promise.reject(new Error(`${name}: ${(error as Error).message}`)));
  child.stdout!.pipe(log, { end: false });
  await Promise.race([ready, spawnFailed]);
  spawnFailed.catch(() => {}); // after the start, a late 'error' is the exit's business

  return {
    name,
    pid: child.pid!,
    logPath,
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const [code] = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}

function waitForLine(child: ChildProcess, pattern: RegExp, label: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`${label} was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      seen = (seen + chunk.toString('utf8')).slice(-8192);
      if (pattern.test(seen)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null, signal: string | null) => fail(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${seen}`));
    const fail = (error: Error) => {
      cleanup();
      child.kill('SIGKILL');
      reject(error);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Polls `probe` every 100 ms until it resolves true.
 * @throws after `timeoutMs` (message: `what`), with the probe's last error if it had one.
 */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
