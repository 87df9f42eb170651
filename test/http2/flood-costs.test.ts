/**
 * What an HTTP/2 attack costs the gateway (README "HTTP/2", design.md §4.17), measured on a gateway
 * alone in its process (test/support/streaming-gateway.ts, H2C): rapid reset, a CONTINUATION flood
 * and a SETTINGS flood each end their connection, and then the gateway is back at rest: its peak
 * RSS rose by less than 64 MiB during the attack, and half a second after the connection is gone
 * it spends less than 40 % of the following second on the CPU (nothing left spinning: a busy loop
 * would be near 100 %; the measuring child itself runs a minor GC every 10 ms), while another
 * client is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { continuationFlood, rapidReset, settingsFlood } from '../support/http2-attacks.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { startStreamingGateway, type StreamingGateway } from '../support/streaming-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const MiB = 1024 * 1024;
const MAX_GROWTH = 64 * MiB;
/** How long after an attack the gateway is left to settle, then watched at rest, in ms. */
const SETTLE_MS = 500;
const REST_MS = 1_000;

describe('the cost of an HTTP/2 attack', () => {
  let upstream: EchoUpstream;
  let gateway: StreamingGateway;
  let authority: string;

  before(async () => {
    upstream = await startEchoUpstream();
    gateway = await startStreamingGateway(upstream.origin, { H2C: 'true' });
    authority = `127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const attacks = {
    'rapid reset': () => rapidReset(gateway.port, authority, '/big/reset'),
    'a CONTINUATION flood': () => continuationFlood(gateway.port, authority, '/big/x'),
    'a SETTINGS flood': () => settingsFlood(gateway.port),
  };
  for (const [name, attack] of Object.entries(attacks)) {
    it(`${name}: memory bounded while it lasts, the CPU at rest once its connection is closed, others served`, async (t) => {
      const { peak: baseline } = await gateway.resetPeak();
      await attack();
      const { peak } = await gateway.memory();
      // Windows of time to measure, not waits for an event.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const { cpuMicros: from } = await gateway.memory();
      await new Promise((resolve) => setTimeout(resolve, REST_MS));
      const { cpuMicros: to } = await gateway.memory();
      const restMs = (to - from) / 1000;
      t.diagnostic(`${name}: peak RSS +${((peak - baseline) / MiB).toFixed(1)} MiB; CPU ${restMs.toFixed(1)} ms in a ${REST_MS} ms window from ${SETTLE_MS} ms after`);
      assert.ok(peak - baseline < MAX_GROWTH, `peak RSS grew ${((peak - baseline) / MiB).toFixed(1)} MiB`);
      assert.ok(restMs < REST_MS * 0.4, `${restMs.toFixed(1)} ms of CPU in ${REST_MS} ms at rest`);
      const session = await openSession(gateway.origin);
      try {
        assert.equal((await http2Request(session, { ':path': '/big/other' })).status, 200);
      } finally {
        session.close();
      }
    });
  }
});
