import { Cluster, type RedisOptions } from 'ioredis';
import { urlTarget, type RedisTarget } from '../../../config/redis-target.js';
import { openRedisClient, type RedisClient } from './redis-client-options.js';
import { createLogger, type Logger } from '../../../logger.js';
import { ChannelSubscriptions } from './channel-subscriptions.js';
import { describeError } from '../../../error-code.js';
import { SentinelSwitchWatch } from './sentinel-switch-watch.js';

/** The first reconnection's delay, in ms; each next one doubles it up to `maxReconnectDelayMs`. */
const FIRST_RECONNECT_DELAY_MS = 100;

/** How the connections behave when Redis is slow or away. Every field is optional. */
export interface RedisConnectionOptions {
  /** Give up one connection attempt after this long, in ms (default 2,000). */
  connectTimeoutMs?: number;
  /**
   * Longest pause between reconnection attempts, in ms (default 500: a process cut off from Redis
   * is back within about that of the link's return, inside the 1 s the fleet promises). Attempts never stop.
   */
  maxReconnectDelayMs?: number;
  /** A command on the command connection with no reply after this long fails, in ms (default 1,000). */
  commandTimeoutMs?: number;
  /**
   * How long a write (session create/destroy, registry publication) waits for the command
   * connection to come back before failing, in ms (default 2,000). Reads never wait.
   */
  writeWaitMs?: number;
  /** Prefix of the connection names shown by CLIENT LIST (default `gatehouse`). */
  name?: string;
  /** Told about connections lost (warn) and restored (info); silent by default. */
  logger?: Logger;
}

/**
 * The ioredis clients of one process, tuned to fail fast and reconnect forever:
 * - `command`: one shared connection for ordinary commands (GET/SET, XADD, scripts, the rate
 *   limiter). No offline queue and `maxRetriesPerRequest: 0`: while Redis is away a command
 *   rejects at once (and commands in flight when the socket drops reject with it) instead of
 *   waiting for a reconnect, so the data plane can fall back (cached sessions, memory limits,
 *   buffered access logs) or fail closed without stalling requests. Not re-sent after a
 *   reconnect either (`autoResendUnfulfilledCommands: false`): callers retry if they want to.
 * - a subscriber connection, shared through {@link subscriptions}. It keeps ioredis' offline
 *   queue, so SUBSCRIBE issued before the first connect is sent once connected.
 * - {@link dedicated} connections for blocking reads (XREADGROUP BLOCK), which must not hold up
 *   the command connection.
 * Reconnection: exponential backoff from 100 ms, capped at `maxReconnectDelayMs`.
 * Silent peers: a Redis whose host vanishes (its link cut, a partition) sends no FIN or RST, so
 * the socket looks alive and commands merely time out. Every connection is therefore dropped and
 * made again once it has heard nothing for twice the command timeout while a command was out
 * (ioredis `socketTimeout`; a dedicated connection adds its longest blocking wait), and the
 * subscriber PINGs every command timeout so that it has a command out; the new connection goes
 * to whatever is the primary now (through the Sentinels, or the Cluster's slot map). With
 * Sentinel, the Sentinels' own failover announcement makes every connection move at once
 * ({@link SentinelSwitchWatch}).
 */
export class RedisConnections {
  /** The shared command connection (see the class comment). */
  readonly command: RedisClient;
  /** Pub/sub channels over the shared subscriber connection. */
  readonly subscriptions: ChannelSubscriptions;
  readonly #subscriber: RedisClient;
  readonly #dedicated = new Set<RedisClient>();
  readonly #target: RedisTarget;
  readonly #options: Required<Omit<RedisConnectionOptions, 'logger'>>;
  readonly #logger: Logger;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #switchWatch: SentinelSwitchWatch | undefined;
  #closed = false;
  /** When the command connection was found down (lost, or a heartbeat PING unanswered), until it recovers; epoch ms. */
  #commandDownSince: number | undefined;
  /** When the subscriber connection last became ready; epoch ms. */
  #subscriberReadyAt = 0;

  /**
   * Starts connecting at once to `target` (a URL: a single node); never throws for an unreachable
   * Redis (see {@link ready}). With a Cluster, each of these is a Cluster client (its node
   * connections tuned the same way) and pub/sub goes through the node the subscriber client picks:
   * a PUBLISH reaches the subscribers of every node.
   */
  constructor(target: string | RedisTarget, options: RedisConnectionOptions = {}) {
    this.#target = typeof target === 'string' ? urlTarget(target) : target;
    this.#options = {
      connectTimeoutMs: options.connectTimeoutMs ?? 2_000,
      maxReconnectDelayMs: options.maxReconnectDelayMs ?? 500,
      commandTimeoutMs: options.commandTimeoutMs ?? 1_000,
      writeWaitMs: options.writeWaitMs ?? 2_000,
      name: options.name ?? 'gatehouse',
    };
    this.#logger = options.logger ?? createLogger('silent', 'redis');
    const silentMs = 2 * this.#options.commandTimeoutMs;
    this.command = this.#open('command', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: this.#options.commandTimeoutMs,
      socketTimeout: silentMs,
    });
    this.#subscriber = this.#open('subscriber', { maxRetriesPerRequest: null, socketTimeout: silentMs });
    this.subscriptions = new ChannelSubscriptions(this.#subscriber, this.#logger);
    for (const client of [this.command, this.#subscriber]) this.#keepOpen(client);
    this.#watchCommandHealth();
    this.#heartbeat = setInterval(() => this.#beat(), this.#options.commandTimeoutMs).unref();
    if (this.#target.kind === 'sentinel') {
      this.#switchWatch = new SentinelSwitchWatch(this.#target, () => this.#reconnectAll(), this.#logger, this.#options.commandTimeoutMs);
    }
  }

  /**
   * A new connection of its own for blocking commands, closed by {@link close} (or by the caller).
   * Fails fast like the command connection; a blocking read with `BLOCK ms` that gets no reply
   * within ms + the command timeout resolves null client-side (ioredis `blockingTimeout`), and a connection that
   * hears nothing for `longestWaitMs` (its longest blocking command, in ms) plus twice the command
   * timeout while a command is out is dropped and made again (silent peers: see the class
   * comment). `overrides` tune it further (a command timeout of its own, say).
   */
  dedicated(role: string, longestWaitMs: number, overrides: RedisOptions = {}): RedisClient {
    const client = this.#open(role, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      blockingTimeout: this.#options.commandTimeoutMs,
      // A BLOCK ms read resolves null client-side after ms + this: ioredis' 100 ms default loses
      // replies that a busy event loop reads a moment late.
      blockingTimeoutGrace: this.#options.commandTimeoutMs,
      socketTimeout: longestWaitMs + 2 * this.#options.commandTimeoutMs,
      ...overrides,
    });
    this.#dedicated.add(client);
    client.once('end', () => this.#dedicated.delete(client));
    return client;
  }

  /**
   * Resolves once the command and subscriber connections are ready and Redis has confirmed every
   * subscription (at once when all that holds already).
   * @throws when `timeoutMs` passes first.
   */
  async ready(timeoutMs?: number): Promise<void> {
    const waits: Array<ReturnType<typeof nextEvent>> = [];
    const whenReady = async (client: RedisClient) => {
      if (client.status === 'ready') return;
      const wait = nextEvent(client, 'ready');
      waits.push(wait);
      await wait.promise;
    };
    const work = (async () => {
      await whenReady(this.command);
      await whenReady(this.#subscriber);
      await this.subscriptions.confirmed();
    })();
    if (timeoutMs === undefined) return work;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis not ready within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
      work.catch(() => undefined);
      for (const wait of waits) wait.cancel(new Error('ready() gave up'));
    }
  }

  /**
   * For the admin plane's writes: resolves at once when `client` (default: the command
   * connection) is ready, else when it becomes ready or after `writeWaitMs`, whichever comes first
   * (never rejects; the write that follows fails if Redis is still away). A user logging in just as
   * Redis comes back then waits a moment instead of getting an error; the data plane's reads do not
   * wait.
   */
  async writable(client: RedisClient = this.command): Promise<void> {
    if (client.status === 'ready' || this.#closed) return;
    const ready = nextEvent(client, 'ready');
    const timer = setTimeout(() => ready.cancel(new Error('still away')), this.#options.writeWaitMs);
    await ready.promise.catch(() => undefined);
    clearTimeout(timer);
  }

  /** The readiness probe: PING on the command connection answered PONG (within the command timeout). */
  async ping(): Promise<boolean> {
    if (this.command.status !== 'ready') return false;
    try {
      return (await this.command.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  /**
   * Closes every connection: QUIT when connected, else drops it. A QUIT with no reply within the
   * command timeout (Redis hung, or its host gone without a word) drops the connection too, so
   * this resolves within about `commandTimeoutMs` + {@link DISCONNECT_TIMEOUT_MS} whatever Redis
   * does. Safe to call twice.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#switchWatch?.close();
    const clients = [this.command, this.#subscriber, ...this.#dedicated];
    await Promise.all(clients.map((client) => closeClient(client, this.#options.commandTimeoutMs)));
  }

  /**
   * PING on both connections. The subscriber otherwise sends nothing after its SUBSCRIBEs: with the
   * socket timeout, a subscriber whose Redis vanished without a word (its host cut off) is dropped
   * and made again within about two command timeouts (to the new primary after a failover),
   * instead of listening to a dead socket until TCP gives up, many minutes later. A Cluster client
   * picks and replaces its subscriber node itself. The command connection's PING tells an outage
   * from a quiet moment even when it is idle (see {@link #watchCommandHealth}).
   */
  #beat(): void {
    if (this.command.status === 'ready') {
      this.command.ping().then(() => this.#commandRecovered(), () => this.#commandDown());
    }
    if (this.#subscriber instanceof Cluster || this.#subscriber.status !== 'ready') return;
    this.#subscriber.ping().catch(() => undefined);
  }

  /**
   * A subscriber that outlived an outage of the command connection cannot be trusted: a partition
   * shorter than its socket timeout leaves it open, and the messages Redis published meanwhile
   * arrive only when TCP's retransmission backoff next tries (a second or more after the link
   * returns), or never. So once the command connection answers again, a subscriber not made since
   * the outage began is made again, and its re-subscription runs the reconnect handlers (re-read
   * snapshots, drop cached sessions): the process catches up within about one reconnection.
   */
  #watchCommandHealth(): void {
    let connected = false;
    this.command.on('close', () => {
      if (connected) this.#commandDown();
      connected = false;
    });
    this.command.on('ready', () => {
      connected = true;
      this.#commandRecovered();
    });
    this.#subscriber.on('ready', () => (this.#subscriberReadyAt = Date.now()));
  }

  #commandDown(): void {
    this.#commandDownSince ??= Date.now();
  }

  #commandRecovered(): void {
    const downSince = this.#commandDownSince;
    if (downSince === undefined || this.#closed) return;
    this.#commandDownSince = undefined;
    if (this.#subscriberReadyAt < downSince && this.#subscriber.status === 'ready') {
      this.#logger.debug('subscriber outlived a Redis outage; reconnecting it to catch up');
      this.#subscriber.disconnect(true);
    }
  }

  /**
   * After a Sentinel failover: every connection that is up leaves the old primary for the new one
   * now. One still connecting is left alone: it asks the Sentinels anyway, and ioredis ends a
   * client for good when its connector is interrupted mid-connect.
   */
  #reconnectAll(): void {
    for (const client of [this.command, this.#subscriber, ...this.#dedicated]) {
      if (client.status === 'ready' || client.status === 'connect') client.disconnect(true);
    }
  }

  /**
   * Starts `client` again when it ended without {@link close}: ioredis gives a client up for good
   * when its connector fails (a Sentinel connection interrupted mid-connect, say), which would leave
   * this process failing closed until restarted. Soon (the first reconnection delay), not after the
   * longest: the link may be back already, and each attempt is bounded by the connect timeout anyway.
   */
  #keepOpen(client: RedisClient): void {
    client.on('end', () => {
      if (this.#closed) return;
      setTimeout(() => {
        if (!this.#closed && client.status === 'end') client.connect().catch(() => undefined);
      }, Math.min(FIRST_RECONNECT_DELAY_MS, this.#options.maxReconnectDelayMs)).unref();
    });
  }

  #open(role: string, overrides: RedisOptions): RedisClient {
    const client = openRedisClient(this.#target, {
      connectTimeout: this.#options.connectTimeoutMs,
      retryStrategy: (attempt) => Math.min(FIRST_RECONNECT_DELAY_MS * 2 ** (attempt - 1), this.#options.maxReconnectDelayMs),
      connectionName: `${this.#options.name}:${role}`,
      keepAlive: 10_000,
      disconnectTimeout: DISCONNECT_TIMEOUT_MS,
      ...overrides,
    });
    this.#watch(client, role);
    return client;
  }

  /**
   * Logs transitions only (lost, restored), not every failed reconnection attempt, and why Redis
   * cannot be reached once per reason (refused, a wrong password, a TLS handshake refused): ioredis
   * reports one error per attempt, with backoff, forever. Never a password (describeError).
   */
  #watch(client: RedisClient, role: string): void {
    // A connection that never was ready is not "lost": 'cannot reach redis' says why it waits.
    let connected = false;
    let connectedBefore = false;
    let reason: string | undefined;
    client.on('error', (error: unknown) => {
      const described = describeError(error);
      if (described.message === reason || this.#closed) return;
      reason = described.message;
      this.#logger.warn({ role, err: described }, 'cannot reach redis; retrying');
    });
    client.on('close', () => {
      if (!connected || this.#closed) return;
      connected = false;
      this.#logger.warn({ role }, 'redis connection lost; reconnecting');
    });
    client.on('ready', () => {
      reason = undefined;
      if (connected) return;
      if (connectedBefore) this.#logger.info({ role }, 'redis connection restored');
      connected = connectedBefore = true;
    });
  }
}

/**
 * How long a dropped connection waits for the socket to close after sending FIN before destroying
 * it, in ms (ioredis `disconnectTimeout`; its default is 2,000). A peer that vanished never answers.
 */
const DISCONNECT_TIMEOUT_MS = 500;

/** QUIT, dropping the connection if no reply comes within `quitTimeoutMs`; resolves once it ended. */
async function closeClient(client: RedisClient, quitTimeoutMs: number): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  const ended = nextEvent(client, 'end');
  // The subscriber connection has no command timeout: without this cut a QUIT to a silent peer
  // waits for TCP keepalive to give up, many minutes later.
  const cut = setTimeout(() => client.disconnect(), quitTimeoutMs);
  await client.quit().catch(() => client.disconnect());
  await ended.promise;
  clearTimeout(cut);
}

/**
 * The next `event` of `client`. Unlike `events.once`, an 'error' in between does not reject:
 * ioredis emits one per failed reconnection attempt, and those are expected here.
 */
export function nextEvent(client: RedisClient, event: string): { promise: Promise<void>; cancel(error: Error): void } {
  let cancel: (error: Error) => void = () => {};
  const promise = new Promise<void>((resolve, reject) => {
    const listener = () => resolve();
    client.once(event, listener);
    cancel = (error) => {
      client.off(event, listener);
      reject(error);
    };
  });
  return { promise, cancel };
}
