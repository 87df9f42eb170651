import type { StoreAccessLogs } from '../access-log-batch.js';
import type { Backends } from '../backends.js';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../logger.js';
import { AccessLogStreamConsumer, type AccessLogStreamConsumerOptions } from './access-log/access-log-stream-consumer.js';
import { RedisAccessLogSink, type RedisAccessLogSinkOptions } from './access-log/redis-access-log-sink.js';
import { RedisConnections, type RedisConnectionOptions } from './connection/redis-connections.js';
import { RedisEventBus, type RedisEventBusOptions } from './event-bus/redis-event-bus.js';
import { RATE_LIMIT_PREFIX } from './redis-keys.js';
import { RedisReplayGuard } from './redis-replay-guard.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from './sessions/redis-session-store.js';
import { DEFAULT_SESSION_CHECKS, SessionGate } from '../../identity/session-gate.js';

/**
 * Where this process consumes the access-log stream to, if anywhere, and the tuning of each part;
 * every field is optional and documented (with its default) on its type.
 */
export interface RedisBackendsOptions {
  /**
   * Where a stream consumer, started at open and stopped by `close()`, delivers the access-log
   * records (the admin side: the admin process, or the embedded gateway with REDIS_URL). Unset:
   * no consumer (a proxy process).
   */
  storeAccessLogs?: StoreAccessLogs;
  /** How long {@link openRedisBackends} waits for Redis before throwing, in ms (default 10,000; 0: no wait). */
  startupTimeoutMs?: number;
  connection?: Omit<RedisConnectionOptions, 'logger'>;
  sessions?: Omit<RedisSessionStoreOptions, 'logger'>;
  bus?: Omit<RedisEventBusOptions, 'logger'>;
  accessLog?: Omit<RedisAccessLogSinkOptions, 'logger'>;
  consumer?: Omit<AccessLogStreamConsumerOptions, 'logger'>;
}

/** The Redis {@link Backends}, with its concrete parts exposed (readiness, tests). */
export interface RedisBackends extends Backends {
  readonly connections: RedisConnections;
  readonly sessions: RedisSessionStore;
  readonly bus: RedisEventBus;
  readonly generalLimiter: RedisRateLimiter;
  readonly authLimiter: RedisRateLimiter;
  readonly tokenLimiter: RedisRateLimiter;
  /** The process's one sink (made on the first call): XADD to the access-log stream. */
  accessLogSink(): RedisAccessLogSink;
  /**
   * Starts a stream consumer delivering to `store`; `close()` stops it too. Called at open when
   * {@link RedisBackendsOptions.storeAccessLogs} is given.
   */
  consumeAccessLogs(store: StoreAccessLogs): AccessLogStreamConsumer;
}

/**
 * Split-mode {@link Backends} over `config.redis` (or `config.redisUrl`): one {@link RedisConnections} (command and
 * subscriber connections, plus one dedicated connection per consumer), {@link RedisSessionStore},
 * {@link RedisEventBus}, {@link RedisRateLimiter}s under `gatehouse:rl:general` /
 * `gatehouse:rl:auth` / `gatehouse:rl:token` with the configured limits (the token limiter off
 * when `rateLimitToken` is not given), a {@link RedisAccessLogSink} and
 * {@link AccessLogStreamConsumer}s (one started at open when `options.storeAccessLogs` is given).
 * Readiness: `redis` (PING answered), `registry` and `assertion-keys` (a snapshot of each is
 * loaded). Resolves once Redis answers, or at once when `startupTimeoutMs` is 0: the connections
 * then keep trying (backoff, forever), the readiness checks fail until Redis answers, writes fail
 * as in an outage (publications are re-sent on connect), and the stream consumer waits for Redis.
 * @throws when REDIS_URL is unset, or Redis is not reachable within `startupTimeoutMs` (the message
 *   never quotes the URL, which may hold a password).
 */
export async function openRedisBackends(
  config: Pick<Config, 'redisUrl' | 'rateLimitGeneral' | 'rateLimitAuth'> & Partial<Pick<Config, 'sessionChecks' | 'redis' | 'rateLimitToken'>>,
  logger: Logger,
  options: RedisBackendsOptions = {},
): Promise<RedisBackends> {
  const target = config.redis ?? config.redisUrl;
  if (!target) throw new Error('neither REDIS_URL nor REDIS_SENTINELS is set');
  const child = (component: string) => logger.child({ component });
  const connections = new RedisConnections(target, { ...options.connection, logger: child('redis') });
  const startupTimeoutMs = options.startupTimeoutMs ?? 10_000;
  if (startupTimeoutMs > 0) {
    await connections.ready(startupTimeoutMs).catch(async () => {
      await connections.close();
      throw new Error(`${config.redis?.kind === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_URL'}: Redis did not answer within ${startupTimeoutMs} ms`);
    });
  }
  const backends = assemble(connections, config, child, options);
  if (options.storeAccessLogs) backends.consumeAccessLogs(options.storeAccessLogs);
  return backends;
}

function assemble(
  connections: RedisConnections,
  config: Pick<Config, 'rateLimitGeneral' | 'rateLimitAuth'> & Partial<Pick<Config, 'sessionChecks' | 'rateLimitToken'>>,
  child: (component: string) => Logger,
  options: RedisBackendsOptions,
): RedisBackends {
  const sessions = new RedisSessionStore(connections, {
    idleTimeoutMs: config.sessionChecks?.idleTimeoutMs,
    ...options.sessions,
    logger: child('sessions'),
  });
  const bus = new RedisEventBus(connections, { ...options.bus, logger: child('event-bus') });
  const limiterLogger = child('rate-limiter');
  const consumers = new Set<AccessLogStreamConsumer>();
  let sink: RedisAccessLogSink | undefined;
  return {
    connections,
    sessions,
    sessionGate: new SessionGate(sessions, config.sessionChecks ?? DEFAULT_SESSION_CHECKS, child('sessions')),
    bus,
    usedTokenIds: new RedisReplayGuard(connections),
    generalLimiter: new RedisRateLimiter(connections, config.rateLimitGeneral, { keyPrefix: RATE_LIMIT_PREFIX.general, logger: limiterLogger }),
    authLimiter: new RedisRateLimiter(connections, config.rateLimitAuth, { keyPrefix: RATE_LIMIT_PREFIX.auth, logger: limiterLogger }),
    tokenLimiter: new RedisRateLimiter(connections, config.rateLimitToken ?? null, { keyPrefix: RATE_LIMIT_PREFIX.token, logger: limiterLogger }),
    accessLogSink: () => (sink ??= new RedisAccessLogSink(connections, { ...options.accessLog, logger: child('access-log') })),
    consumeAccessLogs(store) {
      const consumer = new AccessLogStreamConsumer(connections, store, { ...options.consumer, logger: child('access-log-consumer') });
      consumers.add(consumer);
      consumer.start();
      return consumer;
    },
    readiness: [
      { name: 'redis', check: () => connections.ping() },
      { name: 'registry', check: () => bus.loaded },
      { name: 'assertion-keys', check: () => bus.assertionKeysLoaded },
    ],
    async close() {
      await sink?.close();
      await Promise.all([...consumers].map((consumer) => consumer.stop()));
      await sessions.close();
      await bus.close();
      await connections.close();
    },
  };
}
