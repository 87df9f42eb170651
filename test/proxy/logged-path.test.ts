import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loggedPath, MAX_LOGGED_PATH_BYTES, TRUNCATION_MARK } from '../../proxy/pipeline/logged-path.js';

/** The stored text without its mark, checked to be cut (the mark present) and within the limit. */
function kept(target: string): string {
  const path = loggedPath(target);
  assert.ok(path.endsWith(TRUNCATION_MARK), `cut: ${path.slice(-20)}`);
  const body = path.slice(0, -TRUNCATION_MARK.length);
  assert.ok(Buffer.byteLength(body) <= MAX_LOGGED_PATH_BYTES, `${Buffer.byteLength(body)} bytes`);
  assert.ok(target.startsWith(body), 'a prefix of the request-target');
  return body;
}

describe('the access log stores a request-target cut to 2,048 bytes (logged-path.ts)', () => {
  it('keeps a target that fits as the same string, up to exactly 2,048 bytes', () => {
    for (const target of ['/app', `/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 1)}`, `/${'é'.repeat(1000)}`]) {
      assert.equal(loggedPath(target), target);
    }
  });

  it('cuts 15,000 × "A" to its first 2,048 bytes, followed by the mark', () => {
    const target = `/public-echo/${'A'.repeat(15_000)}`;
    assert.equal(loggedPath(target), target.slice(0, MAX_LOGGED_PATH_BYTES) + TRUNCATION_MARK);
  });

  it('never ends inside a percent-encoded octet', () => {
    for (let shift = 0; shift < 3; shift++) {
      const target = `/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 3 + shift)}%41%41%41%41`;
      const body = kept(target);
      assert.match(body, /^\/a+(%41)*$/, `shift ${shift}: ${body.slice(-8)}`);
    }
  });

  it('never splits a percent-encoded UTF-8 character (a 4-octet emoji at every offset)', () => {
    const emoji = '%F0%9F%98%80'; // U+1F600
    for (let shift = 0; shift < emoji.length; shift++) {
      const target = `/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 12 + shift)}${emoji.repeat(3)}`;
      const body = kept(target);
      const tail = body.replace(/^\/a+/, '');
      assert.equal(tail.length % emoji.length, 0, `shift ${shift}: tail ${tail}`);
      assert.doesNotThrow(() => decodeURIComponent(body), `shift ${shift}: decodes`);
    }
  });

  it('never splits a raw multi-byte character or a surrogate pair', () => {
    for (const char of ['é', '€', '😀']) {
      for (let shift = 0; shift < 4; shift++) {
        const body = kept(`/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 4 + shift)}${char.repeat(10)}`);
        assert.equal(body.replace(/^\/a+/, '').replaceAll(char, ''), '', `${char} shift ${shift}`);
      }
    }
  });

  it('keeps a stray "%" or invalid escape as text (nothing to decode there)', () => {
    const body = kept(`/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 2)}%zz${'b'.repeat(100)}`);
    assert.equal(body, `/${'a'.repeat(MAX_LOGGED_PATH_BYTES - 2)}`);
  });
});
