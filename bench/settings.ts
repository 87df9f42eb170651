/**
 * The benchmark's knobs, from the environment (all optional). Defaults give one run of about
 * five minutes on a quiet 2-core machine (longer while other programs keep it busy).
 */

export interface BenchSettings {
  /** Measured time per scenario and worker count, in s, split over `rounds` (BENCH_DURATION, 10). */
  durationS: number;
  /** Unmeasured load before measuring each target, in s (BENCH_WARMUP, 3). */
  warmupS: number;
  /**
   * Interleaved rounds each scenario's measured time is split into (BENCH_ROUNDS, 4): targets
   * compared with each other take turns, so a burst of load from other programs on the machine,
   * or the machine itself slowing down for a while (seen here: the same server 35 % slower for
   * minutes), falls on all of them rather than on one.
   */
  rounds: number;
  /**
   * A round during which other programs on the machine took more CPU than this, in cores, is run
   * again (BENCH_MAX_OTHER_CORES, 0.25), at most `noisyRetries` more times (BENCH_NOISY_RETRIES, 2).
   */
  maxOtherCores: number;
  noisyRetries: number;
  /** Longest wait for the machine to be that quiet before each round, in s (BENCH_QUIET_WAIT, 120). */
  quietWaitS: number;
  /** Connections for the throughput and fixed-rate runs (BENCH_CONNECTIONS, 64). */
  connections: number;
  /** Connections for the memory run (BENCH_RSS_CONNECTIONS, 256). */
  rssConnections: number;
  /** autocannon worker threads (BENCH_LOAD_WORKERS, 0: clients on the bench's own event loop). */
  loadWorkers: number;
  /** Worker counts measured, for the baseline and the gateway (BENCH_WORKERS, "1,2"). */
  workerCounts: number[];
  /** `auto` uses split mode when the Redis backends are available, else embedded (BENCH_MODE). */
  mode: 'auto' | 'embedded' | 'split';
  /** Services registered in the normal gateway stacks (10) and in the routing-scale one (BENCH_MANY_SERVICES, 10,000). */
  fewServices: number;
  manyServices: number;
}

/** Reads the settings. @throws naming the variable when one is malformed. */
export function readSettings(env: Record<string, string | undefined> = process.env): BenchSettings {
  const mode = env.BENCH_MODE ?? 'auto';
  if (mode !== 'auto' && mode !== 'embedded' && mode !== 'split') throw new Error('BENCH_MODE must be auto, embedded or split');
  const workerCounts = (env.BENCH_WORKERS ?? '1,2').split(',').map((item) => positive('BENCH_WORKERS', item.trim()));
  return {
    durationS: positive('BENCH_DURATION', env.BENCH_DURATION ?? '10'),
    warmupS: positive('BENCH_WARMUP', env.BENCH_WARMUP ?? '3'),
    rounds: positive('BENCH_ROUNDS', env.BENCH_ROUNDS ?? '4'),
    maxOtherCores: decimal('BENCH_MAX_OTHER_CORES', env.BENCH_MAX_OTHER_CORES ?? '0.25'),
    noisyRetries: whole('BENCH_NOISY_RETRIES', env.BENCH_NOISY_RETRIES ?? '2'),
    quietWaitS: whole('BENCH_QUIET_WAIT', env.BENCH_QUIET_WAIT ?? '120'),
    connections: positive('BENCH_CONNECTIONS', env.BENCH_CONNECTIONS ?? '64'),
    rssConnections: positive('BENCH_RSS_CONNECTIONS', env.BENCH_RSS_CONNECTIONS ?? '256'),
    loadWorkers: whole('BENCH_LOAD_WORKERS', env.BENCH_LOAD_WORKERS ?? '0'),
    workerCounts,
    mode,
    fewServices: 10,
    manyServices: positive('BENCH_MANY_SERVICES', env.BENCH_MANY_SERVICES ?? '10000'),
  };
}

function positive(name: string, text: string): number {
  const value = whole(name, text);
  if (value < 1) throw new Error(`${name} must be at least 1`);
  return value;
}

function decimal(name: string, text: string): number {
  if (!/^\d+(\.\d+)?$/.test(text)) throw new Error(`${name} must be a number, got "${text}"`);
  return Number(text);
}

function whole(name: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}
