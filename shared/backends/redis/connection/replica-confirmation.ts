import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-client-options.js';
import type { RedisConnections } from './redis-connections.js';
import { RedisUnavailableError } from './redis-errors.js';

/** How long a write waits for a replica to confirm it, in ms (the `WAIT` timeout). */
export const REPLICA_WAIT_MS = 1_000;

/** A write (connection wait, pipeline, WAIT) gives up after the replica wait plus this, in ms. */
const WRITE_DEADLINE_EXTRA_MS = 3_000;

/**
 * Writes that count only once a replica holds them. Redis replicates asynchronously: a write the
 * primary took can vanish when a replica is promoted before it arrived (a Sentinel or Cluster
 * failover). So after the write, in the same pipeline (on a Cluster: on the same node), ROLE
 * tells whether the primary has replicas; when it has, `WAIT 1 <waitMs>` (Redis `WAIT`: blocks
 * until at least one replica acknowledged every earlier write of this connection) must answer ≥ 1,
 * else the write counts as failed (the caller keeps it and sends it again, or reports the failure;
 * it may still have been stored). A node without replicas (a single node, a cluster without them)
 * costs one extra command in the pipeline and no wait.
 *
 * WAIT blocks its connection, so this writes on a dedicated connection of its own (never the
 * shared command connection, whose reads must not queue behind a wait), made on first use.
 * Writes through one instance should not overlap: WAIT covers every earlier write of the
 * connection, so overlapping ones are confirmed together, never wrongly.
 */
export class ReplicaConfirmation {
  readonly #connections: RedisConnections;
  readonly #role: string;
  readonly #waitMs: number;
  #client: RedisClient | undefined;

  /** `role` names the connection (CLIENT LIST); `waitMs` bounds the wait for a replica (default {@link REPLICA_WAIT_MS}). */
  constructor(connections: RedisConnections, role: string, waitMs = REPLICA_WAIT_MS) {
    this.#connections = connections;
    this.#role = role;
    this.#waitMs = waitMs;
  }

  /**
   * Runs the pipeline (or MULTI) that `build` fills on the dedicated connection, then waits for a
   * replica as the class comment says; `pinKey` is a key the pipeline writes (on a Cluster, the
   * WAIT goes to that key's node). Resolves with the replies of `build`'s commands.
   * @throws {RedisUnavailableError} when Redis is unreachable, a command failed, no replica
   *   confirmed within `waitMs` (its message then says so), or the whole write took longer than
   *   `waitMs` + 3 s.
   */
  async write(build: (client: RedisClient) => ChainableCommander, pinKey: string, doing: string): Promise<unknown[]> {
    // Bounded whatever the client does: a Cluster client can hold a pipeline while its slot map is
    // re-read after a node failure (seen in the fleet tests: a proxy's batch stuck 30 s and more,
    // and every later batch behind it). A write given up here may still land; the caller's retry
    // is idempotent (a re-sent batch) or reported (a sign-in).
    let timer: NodeJS.Timeout | undefined;
    const deadlineMs = this.#waitMs + WRITE_DEADLINE_EXTRA_MS;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RedisUnavailableError(doing, new Error(`no answer within ${deadlineMs} ms`))), deadlineMs);
    });
    try {
      return await Promise.race([this.#write(build, pinKey, doing), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #write(build: (client: RedisClient) => ChainableCommander, pinKey: string, doing: string): Promise<unknown[]> {
    const client = await this.#connection();
    const replies = await execOrThrow(build(client).role(), doing);
    const role = replies.pop() as [string, number, unknown[]?];
    if ((role[2]?.length ?? 0) === 0) return replies;
    const [, acknowledged] = await execOrThrow(client.pipeline().exists(pinKey).wait(1, this.#waitMs), doing);
    if ((acknowledged as number) < 1) throw new RedisUnavailableError(doing, new Error(`no replica confirmed the write within ${this.#waitMs} ms`));
    return replies;
  }

  async #connection(): Promise<RedisClient> {
    // Commands wait at most the replica wait plus a second: a vanished peer never hangs a write.
    this.#client ??= this.#connections.dedicated(this.#role, this.#waitMs, { commandTimeout: this.#waitMs + 1_000 });
    await this.#connections.writable(this.#client);
    return this.#client;
  }
}

/** EXEC of a pipeline or MULTI: the replies, or a {@link RedisUnavailableError} for the first failure. */
async function execOrThrow(pipeline: ChainableCommander, doing: string): Promise<unknown[]> {
  let results: Array<[Error | null, unknown]> | null;
  try {
    results = await pipeline.exec();
  } catch (error) {
    throw new RedisUnavailableError(doing, error);
  }
  if (results === null) throw new RedisUnavailableError(doing, new Error('transaction aborted'));
  const failed = results.find(([error]) => error !== null)?.[0];
  if (failed) throw new RedisUnavailableError(doing, failed);
  return results.map(([, reply]) => reply);
}
