/**
 * design.md §5: the admin port answers only on the loopback address unless ADMIN_HOST opens it; the
 * public port answers on every address.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { startTestGateway } from './support/gateway.js';

/** This machine's first non-loopback IPv4 address, if it has one. */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && !address.internal && address.family === 'IPv4')?.address;

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('by default the admin port is reachable from this machine only', { skip: outside === undefined && 'no non-loopback address' }, async () => {
  const gw = await startTestGateway();
  try {
    assert.equal(await accepts('127.0.0.1', gw.gateway.adminPort), true);
    assert.equal(await accepts(outside!, gw.gateway.adminPort), false, 'not on another address');
    assert.equal(await accepts(outside!, gw.gateway.port), true, 'the public port is');
    const metrics = await fetch(`${gw.adminUrl}/metrics`);
    assert.equal(metrics.status, 200);
    await metrics.text();
  } finally {
    await gw.close();
  }
});

test('ADMIN_HOST=0.0.0.0 opens the admin port to other machines', { skip: outside === undefined && 'no non-loopback address' }, async () => {
  const gw = await startTestGateway({ ADMIN_HOST: '0.0.0.0' });
  try {
    assert.equal(await accepts(outside!, gw.gateway.adminPort), true);
  } finally {
    await gw.close();
  }
});
