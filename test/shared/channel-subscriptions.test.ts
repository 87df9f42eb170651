/**
 * The shared subscriber connection (shared/backends/redis/connection/channel-subscriptions.ts)
 * against a real redis-server: channels subscribed at any moment of the connection's start are
 * all heard, even one subscribed between the TCP connect and ioredis' ready check, which puts the
 * connection in subscriber mode under that check.
 */
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { ChannelSubscriptions } from '../../shared/backends/redis/connection/channel-subscriptions.js';
import { createLogger } from '../../shared/logger.js';
import { eventually } from '../support/eventually.js';
import { startRedis, type RedisServer } from '../support/redis.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

test('hears every channel subscribed while the connection starts, one between connect and ready included', async () => {
  const url = new URL(redis.url);
  const subscriber = new Redis({ host: url.hostname, port: Number(url.port), lazyConnect: true, maxRetriesPerRequest: null });
  const publisher = new Redis({ host: url.hostname, port: Number(url.port) });
  const subscriptions = new ChannelSubscriptions(subscriber, createLogger('silent', 'test'));
  const heard = new Set<string>();
  const listen = (channel: string) => subscriptions.subscribe(channel, () => heard.add(channel));
  try {
    listen('before-connect');
    subscriber.once('connect', () => {
      listen('between-connect-and-ready'); // sent at once: the connection is in subscriber mode from here
      listen('right-after');
    });
    subscriber.on('error', () => undefined); // the ready check refused in subscriber mode: ioredis reconnects
    void subscriber.connect().catch(() => undefined);
    await eventually('the connection to be ready', async () => subscriber.status === 'ready', 10_000, 20);
    listen('after-ready');
    const channels = ['before-connect', 'between-connect-and-ready', 'right-after', 'after-ready'];
    await eventually('every channel to be heard', async () => {
      for (const channel of channels) await publisher.publish(channel, 'x');
      return channels.every((channel) => heard.has(channel));
    }, 10_000, 100);
  } finally {
    subscriber.disconnect();
    publisher.disconnect();
  }
});
