/**
 * A real `redis-server` for tests (design.md §7: real Redis on a free port), in memory only:
 * `redis-server --port <free> --save "" --appendonly no --bind 127.0.0.1`. Readiness is its
 * "Ready to accept connections" log line, never a sleep. `redisForFile` is the setup every Redis
 * test file registers (one server, a flushed database before each test, tracked clients closed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { closeTracked, track } from './tracked.js';

export interface RedisServer {
  /** `redis://HOST:PORT` (HOST `127.0.0.1` unless given). */
  url: string;
  port: number;
  /** Graceful stop (SIGTERM); resolves when the process has exited. */
  stop(): Promise<void>;
  /** Abrupt stop (SIGKILL), as in a crash; resolves when the process has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port (stopping it first if it runs); resolves when it accepts connections. */
  restart(): Promise<void>;
  /**
   * Freezes it (SIGSTOP): connections stay open and nothing answers, as when its host vanishes
   * without closing them (a network partition, a node gone).
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
}

const READY = 'Ready to accept connections';
const LOOPBACK = '127.0.0.1';

/** Where a server on `host`:`port` would write an RDB file (a replica's full sync does, even with `--save ""`). */
function rdbFile(host: string, port: number): string {
  return join(tmpdir(), host === LOOPBACK ? `gatehouse-test-${port}.rdb` : `gatehouse-test-${host}-${port}.rdb`);
}
const START_ATTEMPTS = 3;

/** Where and how a redis-server runs; every field optional. */
export interface RedisServerOptions {
  /** Address it binds to and its URL names; default `127.0.0.1`. */
  host?: string;
  /** Its port; default a free port of 127.0.0.1 (with `host` on another network, give one). */
  port?: number;
  /** A command that runs redis-server, its arguments appended (`['ip', 'netns', 'exec', '<ns>']`); it must exec it. */
  prefix?: readonly string[];
}

/**
 * Spawns redis-server on `host`:`port` with `extraArgs` after the test settings (`--replicaof host port`,
 * say); resolves once it logs readiness, rejects with its output if it exits first.
 */
async function spawnRedis(port: number, extraArgs: readonly string[] = [], host = LOOPBACK, prefix: readonly string[] = []): Promise<ChildProcess> {
  const file = rdbFile(host, port);
  const [command, ...args] = [
    ...prefix,
    'redis-server',
    // A replica's full sync writes an RDB file even with `--save ""`: into the temp folder, not the cwd.
    ...['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', host, '--loglevel', 'notice', '--dir', dirname(file), '--dbfilename', basename(file), ...extraArgs],
  ];
  const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(READY)) {
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        child.stdout?.resume();
        resolve();
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      reject(new Error(`redis-server on port ${port} exited (${code ?? signal}) before it was ready:\n${output}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', onExit);
    child.once('error', reject);
  });
  return child;
}

async function stopProcess(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  // A frozen server (SIGSTOP: `pause`) acts on SIGTERM only once resumed: a test that failed
  // before resuming it would otherwise wait here for ever.
  if (signal !== 'SIGKILL') child.kill('SIGCONT');
  child.kill(signal);
  await exited;
}

/**
 * Starts redis-server on a free port of 127.0.0.1 (another port is tried if the chosen one got
 * taken), or where `options` say, with `extraArgs` (see spawnRedis), also on every restart.
 */
export async function startRedis(extraArgs: readonly string[] = [], options: RedisServerOptions = {}): Promise<RedisServer> {
  const { host = LOOPBACK, prefix = [] } = options;
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 1; child === undefined; attempt++) {
    port = options.port ?? (await freePort());
    try {
      child = await spawnRedis(port, extraArgs, host, prefix);
    } catch (err) {
      if (attempt >= START_ATTEMPTS || options.port !== undefined) throw err;
    }
  }
  // A redis-server must not outlive the test process, whatever happens to the test.
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);

  return {
    url: `redis://${host}:${port}`,
    port,
    async stop() {
      await stopProcess(child, 'SIGTERM');
      process.off('exit', killOnExit);
      rmSync(rdbFile(host, port), { force: true });
    },
    async kill() {
      await stopProcess(child, 'SIGKILL');
      process.off('exit', killOnExit);
      rmSync(rdbFile(host, port), { force: true });
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async restart() {
      await stopProcess(child, 'SIGTERM');
      child = await spawnRedis(port, extraArgs, host, prefix);
      process.off('exit', killOnExit);
      process.on('exit', killOnExit);
    },
  };
}

/** Options of every suite that talks to Redis: a hang (an awaited event that never comes) fails instead of stalling the run. */
export const SUITE = { timeout: 30_000 };

/**
 * Registers what every Redis test file needs: one redis-server for the file; before each test a
 * flushed database and a raw client (`raw`) to inspect it; after each test every tracked resource
 * closed (so a failing test leaves no reconnecting client behind).
 */
export function redisForFile(): { readonly server: RedisServer; readonly raw: Redis } {
  const state = {} as { server: RedisServer; raw: Redis };
  before(async () => {
    state.server = await startRedis();
  });
  after(async () => {
    await closeTracked();
    await state.server.stop();
  });
  beforeEach(async () => {
    state.raw = track(new Redis(state.server.url, { maxRetriesPerRequest: 0 }), (r) => r.disconnect());
    state.raw.on('error', () => {});
    await state.raw.flushall();
  });
  afterEach(closeTracked);
  return state;
}
