/**
 * Targets of a service's pool as real processes (target-process-main.ts), for tests of balancing,
 * health and retries: each answers with its own id, can be made slow, failing or unhealthy while
 * it runs, killed with SIGKILL, and started again on the same port. What reached it is read from
 * the lines it prints as each request arrives, so a request that reached it just before a SIGKILL
 * is known too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { TargetBehaviour } from './target-process-main.js';

export type { TargetAnswer, TargetBehaviour } from './target-process-main.js';

const MAIN = new URL('./target-process-main.js', import.meta.url).pathname;

/** One request as a target saw it arrive. */
export interface Arrival {
  method: string;
  /** Its `X-Test-Request` header, or `-`. */
  requestId: string;
  path: string;
  /** Which run of the process saw it (0 first, 1 after the first restart, …). */
  run: number;
}

export interface TargetProcess {
  /** What it answers with (`target` in its JSON). */
  readonly id: string;
  /** Its port, the same across restarts. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`: its url in a service's `targets`. */
  readonly url: string;
  /** Every request that arrived, across its runs, in order. */
  readonly arrivals: Arrival[];
  /** The `/healthz` probes it answered, across its runs. */
  readonly probes: number;
  /** Whether the process is running. */
  readonly alive: boolean;
  /** Requests that arrived whose `X-Test-Request` ids are these. */
  arrivedIds(): Set<string>;
  /** Changes how it answers; resolves once it has taken the change. */
  set(behaviour: Partial<TargetBehaviour>): Promise<void>;
  /** SIGKILL; resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again on its port, with `behaviour` (its latest one by default); resolves once it listens. */
  restart(behaviour?: Partial<TargetBehaviour>): Promise<void>;
  /** Kills it if it runs. */
  close(): Promise<void>;
}

/**
 * Starts target `id` on a free port (or `port`), answering as `behaviour` says; resolves once it
 * listens.
 */
export async function startTargetProcess(id: string, behaviour: Partial<TargetBehaviour> = {}, port = 0): Promise<TargetProcess> {
  const arrivals: Arrival[] = [];
  let probes = 0;
  let run = -1;
  let current: Partial<TargetBehaviour> = { ...behaviour };
  let child: ChildProcess | undefined;
  let seq = 0;

  const launch = async (onPort: number): Promise<number> => {
    run++;
    const thisRun = run;
    const spawned = spawn(process.execPath, [MAIN], {
      env: { ...process.env, TARGET_ID: id, TARGET_PORT: String(onPort), TARGET_BEHAVIOUR: JSON.stringify(current) },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    });
    child = spawned;
    let announce: ((port: number) => void) | undefined;
    const announced = new Promise<number>((resolve) => (announce = resolve));
    createInterface({ input: spawned.stdout! }).on('line', (line) => {
      const [kind, method, requestId, path] = line.split(' ');
      if (kind === 'arrived') arrivals.push({ method: method!, requestId: requestId!, path: path!, run: thisRun });
      else if (kind === 'probe') probes++;
      else if (kind === 'listening') announce!(Number(method));
    });
    const exited = once(spawned, 'exit').then(() => undefined);
    const listening = await Promise.race([announced, exited]);
    if (listening === undefined) throw new Error(`target ${id} stopped before listening (port ${onPort})`);
    // A target a failed test left running does not hold the test process open: while nothing is
    // awaited of it, it keeps no handle alive (and it exits when this process does, its IPC
    // channel closing).
    hold(spawned, false);
    return listening;
  };

  const isAlive = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;
  const kill = async (): Promise<void> => {
    if (!isAlive()) return;
    const exited = once(child!, 'exit');
    hold(child!, true);
    child!.kill('SIGKILL');
    await exited;
  };

  const actualPort = await launch(port);
  const url = `http://127.0.0.1:${actualPort}`;
  return {
    id,
    port: actualPort,
    url,
    arrivals,
    get probes() {
      return probes;
    },
    get alive() {
      return isAlive();
    },
    arrivedIds: () => new Set(arrivals.map((arrival) => arrival.requestId)),
    async set(change) {
      current = { ...current, ...change };
      const running = child!;
      const mine = ++seq;
      const acked = new Promise<void>((resolve, reject) => {
        const onMessage = (message: { ack?: number }): void => {
          if (message.ack !== mine) return;
          running.off('message', onMessage);
          resolve();
        };
        running.on('message', onMessage);
        running.once('exit', () => reject(new Error(`target ${id} exited before taking ${JSON.stringify(change)}`)));
      });
      hold(running, true);
      running.send({ seq: mine, set: change });
      await acked.finally(() => hold(running, false));
    },
    kill,
    async restart(change = {}) {
      await kill();
      current = { ...current, ...change };
      await launch(actualPort);
    },
    close: kill,
  };
}

/** Whether `child` keeps this process's event loop alive (its process handle, IPC channel and stdout). */
function hold(child: ChildProcess, held: boolean): void {
  const stdout = child.stdout as Socket | null; // a pipe: a net.Socket
  for (const handle of [child, child.channel, stdout]) {
    if (held) handle?.ref();
    else handle?.unref();
  }
}

/** Starts targets `ids` (`['a', 'b', 'c']`), each with `behaviour`. */
export function startTargetProcesses(ids: readonly string[], behaviour: Partial<TargetBehaviour> = {}): Promise<TargetProcess[]> {
  return Promise.all(ids.map((id) => startTargetProcess(id, behaviour)));
}
