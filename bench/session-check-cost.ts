/**
 * What the session checks of design.md §4.12 (shared/identity/session-gate.ts) cost a protected request, in the
 * process, with no load: `node dist/bench/session-check-cost.js`. Both ways of admitting a cached
 * session, taken in turns (A/B rounds) in one run:
 * - before: the store's read and the expiry check, as the data plane did before the gate;
 * - after: `SessionGate.admit`, with every check on (an idle timeout, a refresh token, a provider
 *   grace), on a session neither due for a refresh nor for a recorded use, which is what nearly
 *   every request finds.
 * The store is the embedded one over an in-memory database; the Redis store's cache hit is the
 * same lookup. Prints µs of event loop per request and the ratio.
 */
import { openDatabase } from '../admin/database.js';
import { SqliteSessionStore } from '../shared/backends/embedded/sqlite-session-store.js';
import { createLogger } from '../shared/logger.js';
import { SessionGate } from '../shared/identity/session-gate.js';
import { sampleSession } from '../test/support/samples.js';

const CALLS = 200_000;
const ROUNDS = 6;

async function main(): Promise<void> {
  const db = openDatabase(':memory:');
  const checks = { revalidateMs: 3_600_000, graceMs: 3_600_000, idleTimeoutMs: 3_600_000 };
  const store = new SqliteSessionStore(db, { idleTimeoutMs: checks.idleTimeoutMs });
  const gate = new SessionGate(store, checks, createLogger('silent', 'bench'));
  const id = await store.create(sampleSession({ refreshToken: 'v1.sealed', expiresAt: Date.now() + 3_600_000 }));

  const before = async () => {
    const session = await store.get(id);
    return session !== null && session.expiresAt > Date.now() ? session : null;
  };
  const after = () => gate.admit(id);
  const timings = { before: [] as number[], after: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, admit] of [['before', before], ['after', after]] as const) {
      const started = performance.now();
      for (let n = 0; n < CALLS; n++) if ((await admit()) === null) throw new Error('the session was refused');
      if (round > 0) timings[name].push(((performance.now() - started) * 1000) / CALLS); // round 0 warms up
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const [b, a] = [median(timings.before), median(timings.after)];
  console.log(`session check per request, median of ${ROUNDS - 1} rounds of ${CALLS.toLocaleString('en')} calls`);
  console.log(`  before (store read + expiry): ${b.toFixed(3)} µs`);
  console.log(`  after (SessionGate.admit):    ${a.toFixed(3)} µs`);
  console.log(`  ratio after/before:           ${(a / b).toFixed(2)} (+${(a - b).toFixed(3)} µs)`);
  await store.close();
  db.close();
}

await main();
