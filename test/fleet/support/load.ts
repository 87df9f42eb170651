/**
 * Load from the client host: runs load-client.js inside its namespace and collects every outcome
 * it prints, live (so a test can wait for the answers it expects), and sums them up.
 */
import { createInterface } from 'node:readline';
import { eventually } from '../../support/eventually.js';
import { startOnHost, type HostProcess } from './host-process.js';
import type { LoadOptions, LoadOutcome } from './load-client.js';
import type { FleetHost } from './network.js';

const CLIENT_SCRIPT = new URL('./load-client.js', import.meta.url).pathname;

/** Default bounds: 2 loops, a request every 25 ms each, at most 20,000 requests or 3 minutes, 10 s per request. */
const DEFAULTS = { concurrency: 2, paceMs: 25, maxRequests: 20_000, maxMs: 180_000, timeoutMs: 10_000, cookie: '' };

export interface Load {
  /** The outcomes so far, in the order they completed. */
  readonly outcomes: readonly LoadOutcome[];
  /** Resolves once `condition` holds of the outcomes so far (see eventually). */
  until(what: string, condition: (outcomes: readonly LoadOutcome[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops it (closes its stdin), waits for the requests in flight, and resolves with every outcome. */
  stop(): Promise<readonly LoadOutcome[]>;
}

/** Starts the load on `client` with `options` over the defaults. */
export function startLoad(client: FleetHost, options: Pick<LoadOptions, 'targets' | 'path' | 'tag'> & Partial<LoadOptions>): Load {
  const settings: LoadOptions = { ...DEFAULTS, ...options };
  const program: HostProcess = startOnHost(client, process.execPath, [CLIENT_SCRIPT, JSON.stringify(settings)]);
  const outcomes: LoadOutcome[] = [];
  let done = false;
  const lines = createInterface({ input: program.child.stdout! });
  lines.on('line', (line) => {
    if (!line.startsWith('{')) return;
    const parsed = JSON.parse(line) as LoadOutcome | { done: number };
    if ('done' in parsed) done = true;
    else outcomes.push(parsed);
  });
  const finished = new Promise<void>((resolve) => lines.once('close', resolve));
  return {
    outcomes,
    async until(what, condition, timeoutMs = 30_000) {
      await eventually(what, () => {
        if (done) throw new Error(`the load ended first (${outcomes.length} requests)\n${program.output().slice(-2_000)}`);
        return condition(outcomes);
      }, timeoutMs, 50);
    },
    async stop() {
      program.child.stdin!.end();
      await finished;
      await program.stop();
      if (!done) throw new Error(`the load client did not finish cleanly:\n${program.output().slice(-2_000)}`);
      return outcomes;
    },
  };
}

/** What a load's outcomes come to, for assertions and the printed figures. */
export interface LoadFigures {
  sent: number;
  /** Outcomes that are not 200 (another status or no response). */
  failed: number;
  /** Outcomes without a response (a reset, a timeout). */
  unanswered: number;
  slowestMs: number;
  /** Count per status or error code. */
  kinds: Record<string, number>;
}

/** Sums up `outcomes` (all of them, or those sent from `since` on). */
export function loadFigures(outcomes: readonly LoadOutcome[], since = 0): LoadFigures {
  const counted = outcomes.filter((outcome) => outcome.start >= since);
  const kinds: Record<string, number> = {};
  for (const outcome of counted) {
    const kind = String(outcome.status ?? outcome.error);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return {
    sent: counted.length,
    failed: counted.filter((outcome) => outcome.status !== 200).length,
    unanswered: counted.filter((outcome) => outcome.status === undefined).length,
    slowestMs: Math.max(0, ...counted.map((outcome) => outcome.ms)),
    kinds,
  };
}

/**
 * When each target answered 200 again for good after `since`: per target, the start of its first
 * 200 after its last other outcome, in ms from `since` (0 when it never failed). The largest is
 * the time to recover. Undefined for a target that never answered 200 after its last failure.
 */
export function recoveryMs(outcomes: readonly LoadOutcome[], since: number): Record<string, number | undefined> {
  const targets = [...new Set(outcomes.map((outcome) => outcome.target))];
  return Object.fromEntries(targets.map((target) => {
    const mine = outcomes.filter((outcome) => outcome.target === target && outcome.start >= since).sort((a, b) => a.start - b.start);
    const lastFailure = mine.reduce((last, outcome, index) => (outcome.status === 200 ? last : index), -1);
    if (lastFailure === -1) return [target, 0];
    const firstGood = mine.slice(lastFailure + 1).find((outcome) => outcome.status === 200);
    return [target, firstGood === undefined ? undefined : firstGood.start - since];
  }));
}

/** Whether every one of `targets` has answered 200 to its last `count` requests (sent from `since` on). */
export function steadyOn(outcomes: readonly LoadOutcome[], targets: readonly string[], since: number, count = 20): boolean {
  return targets.every((target) => {
    const mine = outcomes.filter((outcome) => outcome.target === target && outcome.start >= since);
    return mine.length >= count && mine.slice(-count).every((outcome) => outcome.status === 200);
  });
}
