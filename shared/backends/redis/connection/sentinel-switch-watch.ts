import { Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../../../config/redis-target.js';
import type { Logger } from '../../../logger.js';
import { tlsOptions } from './redis-client-options.js';
import { describeError } from '../../../error-code.js';

type SentinelTarget = Extract<RedisTarget, { kind: 'sentinel' }>;

/** The Sentinels' announcement of a failover (Redis Sentinel docs, "Pub/Sub messages"). */
const SWITCH_CHANNEL = '+switch-master';

/**
 * Listens to the Sentinels' `+switch-master` announcement of the target's group (payload
 * `<group> <old-ip> <old-port> <new-ip> <new-port>`) and calls `onSwitch` for each: connections
 * still on the old primary drop and reconnect, which asks the Sentinels for the new one. Without
 * it, a connection to a primary whose host went silent (no FIN, no RST) learns of the failover only
 * from its socket timeout, seconds later, and an idle one not before its next command.
 * (ioredis' own `failoverDetector` does this too, but its Sentinel connections outlive `quit()`.)
 *
 * One subscriber connection to one Sentinel at a time, PINGed every `heartbeatMs` with a socket
 * timeout of twice that; when it ends (that Sentinel gone or silent) the next Sentinel of the list
 * is tried, round and round, until {@link close}.
 */
export class SentinelSwitchWatch {
  readonly #target: SentinelTarget;
  readonly #onSwitch: () => void;
  readonly #logger: Logger;
  readonly #heartbeatMs: number;
  #next = 0;
  #client: Redis | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(target: SentinelTarget, onSwitch: () => void, logger: Logger, heartbeatMs = 1_000) {
    this.#target = target;
    this.#onSwitch = onSwitch;
    this.#logger = logger;
    this.#heartbeatMs = heartbeatMs;
    this.#connect();
  }

  /** Stops listening and closes the connection; safe to call twice. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#retry);
    this.#client?.disconnect();
  }

  #connect(): void {
    if (this.#closed) return;
    const sentinel = this.#target.sentinels[this.#next++ % this.#target.sentinels.length]!;
    const client = new Redis({ ...sentinel, ...this.#options() });
    this.#client = client;
    client.on('error', () => {}); // 'end' follows; the next Sentinel is tried then
    client.on('message', (channel: string, message: string) => {
      if (channel === SWITCH_CHANNEL && message.split(' ')[0] === this.#target.name) this.#switched(message);
    });
    client.once('end', () => {
      clearInterval(this.#heartbeat);
      // Every Sentinel tried and none answers: try again a second later, not in a tight loop.
      const pause = this.#next % this.#target.sentinels.length === 0 ? 1_000 : 0;
      if (!this.#closed) this.#retry = setTimeout(() => this.#connect(), pause).unref();
    });
    client.subscribe(SWITCH_CHANNEL).catch(() => client.disconnect());
    this.#heartbeat = setInterval(() => client.ping().catch(() => undefined), this.#heartbeatMs).unref();
  }

  #options(): RedisOptions {
    const tls = tlsOptions(this.#target);
    return {
      ...(this.#target.sentinelPassword !== undefined ? { password: this.#target.sentinelPassword } : {}),
      ...(tls ? { tls } : {}),
      connectionName: 'gatehouse:sentinel-watch',
      connectTimeout: 2 * this.#heartbeatMs,
      socketTimeout: 2 * this.#heartbeatMs,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    };
  }

  #switched(message: string): void {
    const [, , , host, port] = message.split(' ');
    this.#logger.info({ primary: `${host}:${port}` }, 'Sentinel switched the primary; reconnecting');
    try {
      this.#onSwitch();
    } catch (error) {
      this.#logger.error({ err: describeError(error) }, 'reconnecting after a switch failed');
    }
  }
}
