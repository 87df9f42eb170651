/**
 * What confirming access-log batches at a replica (README "Running a fleet", shared/backends/redis/
 * replica-confirmation.ts) costs a proxy per request: `node dist/bench/replica-confirmation-cost.js`.
 * Three sinks, each shipping the same records through a real redis-server, taken in turns (A/B/C
 * rounds) in one run:
 * - before: the sink as it was before the change, a bare XADD per batch on the shared command
 *   connection, to a primary without replicas;
 * - alone: today's sink and a primary without replicas (ROLE says so: XADD + ROLE, no wait);
 * - replicated: today's sink and a primary with one replica (`--replicaof`): XADD + ROLE, then
 *   EXISTS + WAIT 1.
 * Batches of 500 records (the sink's `maxBatch`, what a busy proxy ships), and of 20 (a quiet one
 * shipping every 100 ms). Prints the proxy process's CPU (user + system) per record in µs, and the
 * wall time per batch, each a median of the rounds.
 */
import { BatchingAccessLogSink } from '../shared/backends/batching-access-log-sink.js';
import type { AccessLogSink } from '../shared/backends/access-log-sink.js';
import { encodeBatch } from '../shared/backends/redis/access-log/access-log-stream-entry.js';
import { RedisAccessLogSink } from '../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../shared/backends/redis/connection/redis-connections.js';
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

type Variant = 'before' | 'alone' | 'replicated';

/** The sink of `variant` on `connections` (see the file comment). */
function sinkOf(variant: Variant, connections: RedisConnections, batch: number): AccessLogSink & { shipped: number } {
  const options = { maxBatch: batch, intervalMs: 60_000 };
  if (variant !== 'before') return new RedisAccessLogSink(connections, options);
  return new BatchingAccessLogSink(async (records) => {
    await connections.command.xadd(ACCESS_LOG_STREAM, 'MAXLEN', '~', 100_000, '*', ...encodeBatch(records));
  }, options);
}

/** Ships RECORDS records in batches of `batch` through a fresh sink of `variant` on `server`, one flush per batch. */
async function ship(variant: Variant, server: RedisServer, batch: number): Promise<Figures> {
  const connections = new RedisConnections(server.url);
  await connections.ready(5_000);
  const sink = sinkOf(variant, connections, batch);
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
      const figures: Record<Variant, Figures[]> = { before: [], alone: [], replicated: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, server] of [['before', alone], ['alone', alone], ['replicated', primary]] as const) {
          const result = await ship(name, server, batch);
          if (round > 0) figures[name].push(result); // round 0 warms up
          await cleanup[name === 'replicated' ? 1 : 0]!.del(ACCESS_LOG_STREAM);
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const cpu = (name: Variant) => median(figures[name].map((f) => f.cpuUsPerRecord));
      const wall = (name: Variant) => median(figures[name].map((f) => f.msPerBatch));
      const line = (label: string, name: Variant) =>
        console.log(`  ${label.padEnd(34)}${cpu(name).toFixed(2)} µs CPU per record (×${(cpu(name) / cpu('before')).toFixed(2)}), ${wall(name).toFixed(3)} ms per batch`);
      console.log(`batches of ${batch}, ${RECORDS.toLocaleString('en')} records, median of ${ROUNDS - 1} rounds`);
      line('before (bare XADD):', 'before');
      line('alone (no replica: + ROLE):', 'alone');
      line('replicated (+ EXISTS, WAIT 1):', 'replicated');
    }
  } finally {
    cleanup.forEach((client) => client.disconnect());
    await replica.stop();
    await Promise.all([alone.stop(), primary.stop()]);
  }
}

await main();
