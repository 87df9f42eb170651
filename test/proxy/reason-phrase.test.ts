/**
 * A target's status line that Node cannot write as it came: the client still gets a complete
 * answer (the test timeout is what would catch a client left waiting), with Node's standard reason
 * phrase, or 502 when the status itself is unusable. Raw TCP targets, because node:http never
 * writes such a status line.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { rawRequest, type RawResponse } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { rawUpstream, type RawUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

describe('reason phrases a target sends', { timeout: 5_000 }, () => {
  const opened: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const item of opened.reverse()) await item.close();
  });

  /** What a client gets through the gateway from a target that answers with `statusLine`. */
  async function relayed(statusLine: string): Promise<RawResponse> {
    const target: RawUpstream = await rawUpstream(`${statusLine}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok`);
    opened.push(target);
    const gateway: TestDataPlane = await startDataPlane({ services: [service({ path: '/', targetUrl: target.origin })] });
    opened.push(gateway);
    return rawRequest(gateway.port, 'GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  }

  it("answers with Node's standard phrase when the target's cannot be written", async () => {
    const cases: [statusLine: string, expected: string][] = [
      ['HTTP/1.1 200 ✓ fine', 'HTTP/1.1 200 OK'],
      ['HTTP/1.1 404 Nicht gefunden ✗', 'HTTP/1.1 404 Not Found'],
      ['HTTP/1.1 200 f\u00e9', 'HTTP/1.1 200 OK'],
      ['HTTP/1.1 503 down\x7f', 'HTTP/1.1 503 Service Unavailable'],
    ];
    for (const [statusLine, expected] of cases) {
      const response = await relayed(statusLine);
      assert.equal(response.statusLine, expected, JSON.stringify(statusLine));
      assert.equal(response.body, 'ok');
    }
  });

  it('relays a printable reason phrase of its own', async () => {
    const response = await relayed('HTTP/1.1 200 Fine\tThanks');
    assert.equal(response.statusLine, 'HTTP/1.1 200 Fine\tThanks');
    assert.equal(response.body, 'ok');
  });

  it('answers 502 Bad gateway for a status no response may carry', async () => {
    const response = await relayed('HTTP/1.1 099 Too Low');
    assert.equal(response.status, 502);
    assert.deepEqual(JSON.parse(response.body), { error: 'Bad gateway' });
  });
});
