import { Cluster } from 'ioredis';
import type { RedisClient } from './redis-client-options.js';
import type { Logger } from '../../../logger.js';
import { describeError } from '../../../error-code.js';

/** Called with a pub/sub message's payload. */
export type MessageHandler = (message: string) => void;

/**
 * Lets several components share one subscriber connection: SUBSCRIBE on a channel's first
 * handler, UNSUBSCRIBE after its last one leaves, and each 'message' dispatched by channel.
 * Messages published while the connection is down are lost, so on every 'ready' it SUBSCRIBEs
 * to all its channels again (ioredis' own `autoResubscribe` does too, for the channels it saw
 * confirmed; a repeated SUBSCRIBE is harmless) and, after a disconnect, once Redis confirmed that,
 * runs the {@link onReconnect} handlers, which re-read whatever they may have missed; on a Cluster also whenever a node leaves
 * (see the constructor).
 */
export class ChannelSubscriptions {
  readonly #client: RedisClient;
  readonly #logger: Logger;
  readonly #handlers = new Map<string, Set<MessageHandler>>();
  readonly #reconnectHandlers = new Set<() => void>();
  #connectedBefore = false;
  #confirmed: Promise<void> = Promise.resolve();

  constructor(client: RedisClient, logger: Logger) {
    this.#client = client;
    this.#logger = logger;
    client.on('message', (channel: string, message: string) => this.#dispatch(channel, message));
    client.on('ready', () => this.#ready());
    // A Cluster client keeps 'ready' while the node it subscribes through dies and it moves to
    // another (re-subscribing by itself); messages may have been missed meanwhile all the same.
    if (client instanceof Cluster) client.on('-node', () => this.#runReconnectHandlers());
  }

  /** Resolves once Redis has confirmed every SUBSCRIBE sent so far (never rejects). */
  confirmed(): Promise<void> {
    return this.#confirmed;
  }

  /** Starts delivering `channel`'s messages to `handler`; returns the function that stops it. */
  subscribe(channel: string, handler: MessageHandler): () => void {
    let handlers = this.#handlers.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.#handlers.set(channel, handlers);
      this.#confirm(this.#client.subscribe(channel));
    }
    handlers.add(handler);
    return () => this.#remove(channel, handler);
  }

  /** Runs `handler` whenever the subscriber connection is back (and re-subscribed) after a disconnect. */
  onReconnect(handler: () => void): () => void {
    this.#reconnectHandlers.add(handler);
    return () => this.#reconnectHandlers.delete(handler);
  }

  #remove(channel: string, handler: MessageHandler): void {
    const handlers = this.#handlers.get(channel);
    if (!handlers?.delete(handler) || handlers.size > 0) return;
    this.#handlers.delete(channel);
    if (this.#client.status === 'ready') {
      this.#client.unsubscribe(channel).catch((error: unknown) => this.#failed('UNSUBSCRIBE', error));
    }
  }

  #dispatch(channel: string, message: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) {
      try {
        handler(message);
      } catch (error) {
        this.#logger.error({ err: describeError(error), channel }, 'pub/sub handler failed');
      }
    }
  }

  #ready(): void {
    const reconnect = this.#connectedBefore;
    this.#connectedBefore = true;
    // The first 'ready' too: a SUBSCRIBE sent while the connection was between its connect and its
    // ready check puts it in subscriber mode, the ready check's INFO then fails, ioredis reconnects,
    // and the SUBSCRIBEs queued meanwhile are refused ("Connection in subscriber mode") and never
    // re-sent (its autoResubscribe knows only confirmed channels).
    const channels = [...this.#handlers.keys()];
    if (channels.length > 0) this.#confirm(this.#client.subscribe(...channels));
    if (reconnect) void this.#confirmed.then(() => this.#runReconnectHandlers());
  }

  #runReconnectHandlers(): void {
    for (const handler of this.#reconnectHandlers) handler();
  }

  #confirm(subscribed: Promise<unknown>): void {
    const done = subscribed.then(
      () => undefined,
      (error: unknown) => this.#failed('SUBSCRIBE', error),
    );
    this.#confirmed = Promise.all([this.#confirmed, done]).then(() => undefined);
  }

  #failed(command: string, error: unknown): void {
    this.#logger.debug({ err: describeError(error), command }, 'pub/sub command failed');
  }
}
