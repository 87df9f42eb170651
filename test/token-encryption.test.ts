import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { TokenCipher, TokenDecryptionError, parseEncryptionKeys } from '../shared/identity/token-encryption.js';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
const REFRESH_TOKEN = 'eyJhbGciOiJkaXIifQ..refresh-token-ü-7';
const HANDLE = 'session-handle-1';

/** Asserts opening `sealed` fails with a TokenDecryptionError matching `reason` that does not quote the plaintext. */
function refused(cipher: TokenCipher, sealed: string, reason: RegExp, context = HANDLE): void {
  assert.throws(
    () => cipher.decrypt(sealed, context),
    (error: unknown) => {
      assert.ok(error instanceof TokenDecryptionError, `not a TokenDecryptionError: ${String(error)}`);
      assert.match(error.message, reason);
      assert.ok(!error.message.includes(REFRESH_TOKEN));
      return true;
    },
  );
}

/** `text` with the character at `index` replaced by another base64url character. */
function flip(text: string, index: number): string {
  const replacement = text[index] === 'A' ? 'B' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

test('a sealed token opens to its plaintext with the same context', () => {
  const cipher = new TokenCipher([KEY_A]);
  const sealed = cipher.encrypt(REFRESH_TOKEN, HANDLE);
  assert.match(sealed, /^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
  assert.ok(!sealed.includes('refresh-token'));
  assert.equal(cipher.decrypt(sealed, HANDLE), REFRESH_TOKEN);
  assert.equal(cipher.decrypt(cipher.encrypt('', HANDLE), HANDLE), '');
});

test('two encryptions of the same text differ (a fresh IV each time)', () => {
  const cipher = new TokenCipher([KEY_A]);
  const first = cipher.encrypt(REFRESH_TOKEN, HANDLE);
  const second = cipher.encrypt(REFRESH_TOKEN, HANDLE);
  assert.notEqual(first, second);
  assert.notEqual(first.split('.')[2], second.split('.')[2]);
  assert.equal(first.split('.')[1], second.split('.')[1]);
});

test('rotation: [B, A] opens what A sealed and seals with B; [B] alone refuses A naming no configured key', () => {
  const sealedByA = new TokenCipher([KEY_A]).encrypt(REFRESH_TOKEN, HANDLE);
  const rotated = new TokenCipher([KEY_B, KEY_A]);
  assert.equal(rotated.decrypt(sealedByA, HANDLE), REFRESH_TOKEN);
  const sealedByB = rotated.encrypt(REFRESH_TOKEN, HANDLE);
  assert.equal(new TokenCipher([KEY_B]).decrypt(sealedByB, HANDLE), REFRESH_TOKEN);
  assert.notEqual(sealedByB.split('.')[1], sealedByA.split('.')[1]);
  refused(new TokenCipher([KEY_B]), sealedByA, /no configured key has key id [A-Za-z0-9_-]{8}/);
  refused(new TokenCipher([KEY_A]), sealedByB, /no configured key/);
});

test('tampering with any part is refused', () => {
  const cipher = new TokenCipher([KEY_A, KEY_B]);
  const sealed = cipher.encrypt(REFRESH_TOKEN, HANDLE);
  const [version, id, iv, data] = sealed.split('.') as [string, string, string, string];
  refused(cipher, ['v2', id, iv, data].join('.'), /not a v1 sealed token/);
  refused(cipher, [version, flip(id, 0), iv, data].join('.'), /no configured key/);
  // The other configured key's id: the key exists, but the associated data and key differ.
  const otherId = new TokenCipher([KEY_B]).encrypt('x', HANDLE).split('.')[1]!;
  refused(cipher, [version, otherId, iv, data].join('.'), /authentication failed/);
  refused(cipher, [version, id, flip(iv, 3), data].join('.'), /authentication failed/);
  refused(cipher, [version, id, iv, flip(data, 2)].join('.'), /authentication failed/);
  refused(cipher, [version, id, iv, flip(data, data.length - 4)].join('.'), /authentication failed/);
  // The last character carries unused bits: a spelling other than the canonical one is refused too.
  refused(cipher, [version, id, iv, flip(data, data.length - 1)].join('.'), /authentication failed|not a v1 sealed token/);
  refused(cipher, [version, id, iv, data.slice(0, -4)].join('.'), /authentication failed|not a v1 sealed token/);
  refused(cipher, [version, id, iv, `${data}AAAA`].join('.'), /authentication failed/);
  refused(cipher, [version, id, iv.slice(0, -1), data].join('.'), /not a v1 sealed token/);
  refused(cipher, [version, id, iv, 'AAAA'].join('.'), /not a v1 sealed token/);
  refused(cipher, [version, id, iv, `${data}=`].join('.'), /not a v1 sealed token/);
  refused(cipher, `${sealed}.extra`, /not a v1 sealed token/);
  refused(cipher, REFRESH_TOKEN, /not a v1 sealed token/);
  refused(cipher, '', /not a v1 sealed token/);
});

test('a second spelling of the same bytes (unused bits of the last character set) is refused', () => {
  const cipher = new TokenCipher([KEY_A]);
  // 21 + 16 tag bytes: 37, so the last base64url character carries 4 unused bits.
  const [version, id, iv, data] = cipher.encrypt('x'.repeat(21), HANDLE).split('.') as [string, string, string, string];
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(data.at(-1)!);
  const respelled = data.slice(0, -1) + alphabet[last ^ 1];
  assert.deepEqual(Buffer.from(respelled, 'base64url'), Buffer.from(data, 'base64url'));
  refused(cipher, [version, id, iv, respelled].join('.'), /not a v1 sealed token/);
});

test('a sealed token copied into another context is refused', () => {
  const cipher = new TokenCipher([KEY_A]);
  refused(cipher, cipher.encrypt(REFRESH_TOKEN, HANDLE), /authentication failed/, 'session-handle-2');
  refused(cipher, cipher.encrypt(REFRESH_TOKEN, HANDLE), /authentication failed/, '');
});

test('a cipher needs at least one 32-byte key', () => {
  assert.throws(() => new TokenCipher([]), /at least one key/);
  assert.throws(() => new TokenCipher([randomBytes(16)]), /key 1 is not 32 bytes/);
  assert.doesNotThrow(() => new TokenCipher([KEY_A, Buffer.from(KEY_A)]));
});

test('parseEncryptionKeys reads hex, base64 and base64url keys in order, spaces around commas ignored', () => {
  const key = Buffer.from('fb'.repeat(16) + 'ff'.repeat(16), 'hex'); // base64 and base64url spell this differently
  const base64 = key.toString('base64');
  const base64url = key.toString('base64url');
  assert.ok(base64.includes('+') || base64.includes('/'));
  assert.notEqual(base64.replace(/=$/, ''), base64url);
  const keys = parseEncryptionKeys(` ${KEY_A.toString('hex').toUpperCase()} ,${base64}, ${base64url} , ${base64.replace(/=$/, '')},${KEY_B.toString('base64url')}= `);
  assert.deepEqual(keys, [KEY_A, key, key, key, KEY_B]);
});

test('parseEncryptionKeys refuses short, long, non-base64 keys and an empty list without echoing the key', () => {
  const bad = [
    ['', /no key given/],
    ['   ', /no key given/],
    [`${KEY_A.toString('hex')},`, /key 2 is empty/],
    [`${KEY_A.toString('hex')},,${KEY_B.toString('hex')}`, /key 2 is empty/],
    ['0123456789abcdef', /key 1 is not/],
    [randomBytes(31).toString('hex'), /key 1 is not/],
    [randomBytes(33).toString('hex'), /key 1 is not/],
    [randomBytes(31).toString('base64'), /key 1 is not/],
    [randomBytes(33).toString('base64url'), /key 1 is not/],
    [`${KEY_A.toString('hex')}, ${'g'.repeat(64)}`, /key 2 is not/],
    [`${KEY_A.toString('base64url')}, ${'*'.repeat(43)}`, /key 2 is not/],
    [`${KEY_A.toString('base64').slice(0, 40)}+_-=`, /key 1 is not/],
    [`${KEY_A.toString('base64url')}==`, /key 1 is not/],
  ] as const;
  for (const [text, reason] of bad) {
    assert.throws(
      () => parseEncryptionKeys(text),
      (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.match(error.message, reason);
        for (const key of text.split(',').map((entry) => entry.trim()).filter((entry) => entry.length >= 8)) {
          assert.ok(!error.message.includes(key), 'the message echoes a key');
        }
        return true;
      },
      `for ${JSON.stringify(text)}`,
    );
  }
  assert.throws(() => parseEncryptionKeys('short'), { message: 'each key must be 32 bytes: 64 hex characters or 43-44 base64 characters (key 1 is not)' });
});
