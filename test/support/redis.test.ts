/** The real redis-server test helper (test/support/redis.ts): start, PING, stop, kill, restart. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect as tcpConnect } from 'node:net';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis } from './redis.js';

/** A client that fails fast instead of retrying, so an outage shows as an error. */
function connect(url: string): Redis {
  return new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
}

/** Resolves with the error code of a TCP connection attempt to `port` (null when it connects). */
async function tcpProbe(port: number): Promise<string | null> {
  const socket = tcpConnect(port, '127.0.0.1');
  try {
    return await new Promise<string | null>((resolve) => {
      socket.once('connect', () => resolve(null));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
  } finally {
    socket.destroy();
  }
}

test('startRedis: a real redis-server answers PING, and stop() shuts it down', async () => {
  const redis = await startRedis();
  assert.match(redis.url, /^redis:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(redis.url, `redis://127.0.0.1:${redis.port}`);
  const client = connect(redis.url);
  try {
    await client.connect();
    assert.equal(await client.ping(), 'PONG');
    await client.set('fixture', 'value');
    assert.equal(await client.get('fixture'), 'value');
    const info = await client.info('persistence');
    assert.match(info, /aof_enabled:0/);
    const closed = once(client, 'end');
    await redis.stop();
    await closed;
    assert.equal(await tcpProbe(redis.port), 'ECONNREFUSED');
  } finally {
    client.disconnect();
    await redis.stop();
  }
});

test('kill() then restart(): the same port serves again, empty (nothing persisted)', async () => {
  const redis = await startRedis();
  try {
    const before = connect(redis.url);
    await before.connect();
    await before.set('k', 'v');
    before.disconnect();

    await redis.kill();
    assert.equal(await tcpProbe(redis.port), 'ECONNREFUSED');

    await redis.restart();
    const after = connect(redis.url);
    await after.connect();
    assert.equal(await after.ping(), 'PONG');
    assert.equal(await after.get('k'), null);
    after.disconnect();

    await redis.restart();
    const again = connect(redis.url);
    await again.connect();
    assert.equal(await again.ping(), 'PONG', 'restart() of a running server stops it first');
    again.disconnect();
  } finally {
    await redis.stop();
  }
});

test('two servers run side by side on different ports', async () => {
  const [a, b] = await Promise.all([startRedis(), startRedis()]);
  try {
    assert.notEqual(a.port, b.port);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});
