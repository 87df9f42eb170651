/**
 * What confirming access-log batches at a replica (issue 22, shared/backends/redis/
 * replica-confirmation.ts) costs a proxy per request: `node dist/bench/replica-confirmation-cost.js`.
 * Two sinks, each shipping the same records through a real redis-server, taken in turns (A/B
 * rounds) in one run:
 * - alone: a primary without replicas (ROLE says so: XADD + ROLE, no wait), as before the change
 *   but for one command;
 * - replicated: a primary with one replica (`--replicaof`): XADD + ROLE, then EXISTS + WAIT 1.
 * Batches of 500 records (the sink's `maxBatch`, what a busy proxy ships), and of 20 (a quiet one
 * shipping every 100 ms). Prints the proxy process's CPU (user + system) per record in µs, and the
 * wall time per batch, each a median of the rounds.
 */
import { RedisAccessLogSink } from '../shared/backends/redis/redis-access-log-sink.js';
import { RedisConnections } from '../shared/backends/redis/redis-connections.js';
import { ACCESS_LOG_STREAM } from '../shared/backends/redis/redis-keys.js';
import { startRedis, type RedisServer } from '../test/support/redis.js';
import { sampleEntry } from '../test/support/samples.js';
import { Redis } from 'ioredis';

const RECORDS = 50_000;
const ROUNDS = 6;

interface Figures {
  cpuUsPerRecord: number;
  msPerBatch: number;
}

/** Ships RECORDS records in batches of `batch` through a fresh sink on `server`, one flush per batch. */
async function ship(server: RedisServer, batch: number): Promise<Figures> {
  const connections = new RedisConnections(server.url);
  await connections.ready(5_000);
  const sink = new RedisAccessLogSink(connections, { maxBatch: batch, intervalMs: 60_000 });
  const records = Array.from({ length: RECORDS }, (_, n) => sampleEntry(n));
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let n = 0; n < RECORDS; n += batch) {
    for (const record of records.slice(n, n + batch)) sink.write(record);
    await sink.flush();
  }
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (sink.shipped !== RECORDS) throw new Error(`shipped ${sink.shipped} of ${RECORDS}`);
  await sink.close();
  await connections.close();
  return { cpuUsPerRecord: (used.user + used.system) / RECORDS, msPerBatch: wallMs / (RECORDS / batch) };
}

async function main(): Promise<void> {
  const alone = await startRedis();
  const primary = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port), '--repl-diskless-sync-delay', '0']);
  const cleanup = [alone, primary].map((server) => new Redis(server.url));
  try {
    for (const batch of [500, 20]) {
      const figures = { alone: [] as Figures[], replicated: [] as Figures[] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, server] of [['alone', alone], ['replicated', primary]] as const) {
          const result = await ship(server, batch);
          if (round > 0) figures[name].push(result); // round 0 warms up
          await cleanup[name === 'alone' ? 0 : 1]!.del(ACCESS_LOG_STREAM);
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const cpu = (name: 'alone' | 'replicated') => median(figures[name].map((f) => f.cpuUsPerRecord));
      const wall = (name: 'alone' | 'replicated') => median(figures[name].map((f) => f.msPerBatch));
      console.log(`batches of ${batch}, ${RECORDS.toLocaleString('en')} records, median of ${ROUNDS - 1} rounds`);
      console.log(`  alone (no replica, no wait):    ${cpu('alone').toFixed(2)} µs CPU per record, ${wall('alone').toFixed(3)} ms per batch`);
      console.log(`  replicated (WAIT 1 per batch):  ${cpu('replicated').toFixed(2)} µs CPU per record, ${wall('replicated').toFixed(3)} ms per batch`);
      console.log(`  cost: +${(cpu('replicated') - cpu('alone')).toFixed(2)} µs CPU per record (×${(cpu('replicated') / cpu('alone')).toFixed(2)}), +${(wall('replicated') - wall('alone')).toFixed(3)} ms per batch`);
    }
  } finally {
    cleanup.forEach((client) => client.disconnect());
    await replica.stop();
    await Promise.all([alone.stop(), primary.stop()]);
  }
}

await main();
