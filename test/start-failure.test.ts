/**
 * A gateway that cannot start (its public port taken) leaves nothing behind in the process that
 * asked for it: the admin port it had bound is free again and nothing holds the process open, so an
 * embedder or a test runner that goes on is not kept from ending.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { freePort } from './support/free-port.js';
import { startTestGateway } from './support/gateway.js';
import { closeServer, listen } from './support/listen.js';

test('PORT taken: the start fails naming it, and the admin port it had bound is released', async () => {
  const occupant = createServer();
  const takenPort = await listen(occupant, 0, '127.0.0.1');
  const adminPort = await freePort();
  try {
    await assert.rejects(startTestGateway({ PORT: String(takenPort), ADMIN_PORT: String(adminPort) }), new RegExp(`PORT ${takenPort}: listen EADDRINUSE`));
    const again = createServer();
    await listen(again, adminPort, '127.0.0.1');
    await closeServer(again);
  } finally {
    await closeServer(occupant);
  }
});
