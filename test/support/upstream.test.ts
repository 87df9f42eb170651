/** The echo upstream (test/support/upstream.ts): what it answers and what it records. */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from './upstream.js';

describe('startEchoUpstream', () => {
  let upstream: EchoUpstream;
  before(async () => {
    upstream = await startEchoUpstream();
  });
  after(() => upstream.close());

  test('answers 200 JSON with a message, the method, the raw request target and the headers', async () => {
    const res = await request(`${upstream.url}/a%2Fb/c?x=1&y=%20`, { headers: { 'X-Forwarded-User': 'demo-admin' } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const echo = (await res.body.json()) as EchoResponse;
    assert.equal(echo.message, 'Hello from the echo upstream');
    assert.equal(echo.method, 'GET');
    assert.equal(echo.url, '/a%2Fb/c?x=1&y=%20');
    assert.equal(echo.headers['x-forwarded-user'], 'demo-admin');
    assert.equal(echo.bodyBytes, 0);
    assert.equal((echo as unknown as Record<string, unknown>)['rawHeaders'], undefined);
  });

  test('records each request with raw headers in original case and duplicates', async () => {
    const count = upstream.requests.length;
    const res = await request(`${upstream.url}/rec`, {
      method: 'DELETE',
      headers: ['X-Dup', 'one', 'X-Dup', 'two', 'X-Case', 'kept'],
    });
    await res.body.dump();
    assert.equal(upstream.requests.length, count + 1);
    const recorded = upstream.requests.at(-1);
    assert.equal(recorded?.method, 'DELETE');
    assert.equal(recorded?.url, '/rec');
    assert.equal(recorded?.headers['x-dup'], 'one, two');
    const raw = recorded?.rawHeaders ?? [];
    assert.ok(raw.includes('X-Case'), 'raw names keep their case');
    assert.deepEqual(raw.filter((_, i) => raw[i - 1] === 'X-Dup'), ['one', 'two']);
  });

  test('counts a streamed request body without keeping it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const chunks = 80; // 5 MiB
    const body = Readable.from((function* () { for (let i = 0; i < chunks; i++) yield chunk; })());
    const res = await request(`${upstream.url}/upload`, { method: 'POST', body });
    const echo = (await res.body.json()) as EchoResponse;
    assert.equal(echo.bodyBytes, chunk.length * chunks);
    assert.equal(echo.headers['transfer-encoding'], 'chunked');
    assert.equal(upstream.requests.at(-1)?.bodyBytes, chunk.length * chunks);
  });
});

test('a chosen host and port are honoured, and close() frees the port', async () => {
  const first = await startEchoUpstream({ host: '127.0.0.1' });
  assert.equal(first.url, `http://127.0.0.1:${first.port}`);
  await first.close();
  const second = await startEchoUpstream({ port: first.port });
  try {
    const res = await request(`${second.url}/`);
    assert.equal(((await res.body.json()) as EchoResponse).url, '/');
  } finally {
    await second.close();
  }
  await assert.rejects(request(`${second.url}/`), { code: 'ECONNREFUSED' });
});
