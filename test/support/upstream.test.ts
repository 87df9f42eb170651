/** The echo upstream (test/support/upstream.ts): what it answers and what it records. */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from './upstream.js';

describe('startEchoUpstream', () => {
  let upstream: EchoUpstream;
  before(async () => {
    upstream = await startEchoUpstream();
  });
  after(() => upstream.close());

  test('answers 200 JSON with a message, the method, the raw request target and the header lines as sent', async () => {
    const res = await request(`${upstream.origin}/a%2Fb/c?x=1&y=%20`, { headers: { 'X-Forwarded-User': 'demo-admin' } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const echo = (await res.body.json()) as Echo;
    assert.equal(echo.message, 'Hello from the echo upstream');
    assert.equal(echo.method, 'GET');
    assert.equal(echo.url, '/a%2Fb/c?x=1&y=%20');
    assert.ok(
      echo.headers.some(([name, value]) => name === 'X-Forwarded-User' && value === 'demo-admin'),
      'a [name, value] pair, the name in its original case',
    );
    assert.deepEqual(headerValues(echo, 'x-forwarded-user'), ['demo-admin']);
    assert.equal(echo.bodyBytes, 0);
    assert.deepEqual(Object.keys(echo).sort(), ['bodyBytes', 'headers', 'message', 'method', 'url']);
  });

  test('records each request as it answered it: header names in original case, arrival order, duplicates kept', async () => {
    const count = upstream.requests.length;
    const res = await request(`${upstream.origin}/rec`, {
      method: 'DELETE',
      headers: ['X-Dup', 'one', 'X-Case', 'kept', 'X-Dup', 'two'],
    });
    const answered = (await res.body.json()) as Echo;
    assert.equal(upstream.requests.length, count + 1);
    const recorded = upstream.requests.at(-1)!;
    assert.deepEqual(recorded, answered);
    assert.equal(recorded.method, 'DELETE');
    assert.equal(recorded.url, '/rec');
    assert.deepEqual(headerValues(recorded, 'x-dup'), ['one', 'two']);
    const names = recorded.headers.map(([name]) => name);
    assert.ok(names.includes('X-Case'), 'names keep their case');
    assert.ok(names.indexOf('X-Case') < names.lastIndexOf('X-Dup'), 'lines in arrival order');
  });

  test('counts a streamed request body without keeping it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const chunks = 80; // 5 MiB
    const body = Readable.from((function* () { for (let i = 0; i < chunks; i++) yield chunk; })());
    const res = await request(`${upstream.origin}/upload`, { method: 'POST', body });
    const echo = (await res.body.json()) as Echo;
    assert.equal(echo.bodyBytes, chunk.length * chunks);
    assert.deepEqual(headerValues(echo, 'transfer-encoding'), ['chunked']);
    assert.equal(upstream.requests.at(-1)?.bodyBytes, chunk.length * chunks);
  });
});

test('a chosen host and port are honoured, and close() frees the port', async () => {
  const first = await startEchoUpstream({ host: '127.0.0.1' });
  assert.equal(first.origin, `http://127.0.0.1:${first.port}`);
  await first.close();
  const second = await startEchoUpstream({ port: first.port });
  try {
    const res = await request(`${second.origin}/`);
    assert.equal(((await res.body.json()) as Echo).url, '/');
  } finally {
    await second.close();
  }
  await assert.rejects(request(`${second.origin}/`), { code: 'ECONNREFUSED' });
});
