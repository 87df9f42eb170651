import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Refresh tokens at rest (SESSION_ENCRYPTION_KEY): AES-256-GCM (NIST SP 800-38D) with a fresh
 * random 96-bit IV per encryption and a 128-bit tag. Keys rotate by list order: the first encrypts,
 * every one decrypts, so an operator puts a new key first and removes the old one once every
 * session sealed with it has ended (SESSION_TTL later).
 */

/** AES-256 key length, bytes. */
const KEY_BYTES = 32;
/** GCM IV length, bytes: 96 bits, the length GCM uses without hashing it (SP 800-38D §8.2.2). */
const IV_BYTES = 12;
/** GCM tag length, bytes: the full 128 bits. */
const TAG_BYTES = 16;
/** The format's first part; a change of algorithm or layout gets a new one. */
const VERSION = 'v1';
/** Length of a key id, base64url characters (48 bits of the key's SHA-256). */
const KEY_ID_CHARS = 8;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** 32 bytes in base64 (RFC 4648 §4) or base64url (§5): 43 characters, then the one `=` of padding or none. */
const BASE64_KEY = /^(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The keys of SESSION_ENCRYPTION_KEY: a comma-separated list (spaces around the commas ignored),
 * the first the one that encrypts. Each key is 32 bytes written as 64 hex characters, or as base64
 * or base64url (43 characters, or 44 with `=` padding), and not one byte value repeated.
 * @returns the keys, 32-byte Buffers, in the list's order.
 * @throws {Error} naming what is wrong and which key (1-based), never echoing a key: an empty list,
 *   an empty entry, a key of another shape (shorter or longer than 32 bytes included), or a key
 *   whose bytes are all one value.
 */
export function parseEncryptionKeys(text: string): Buffer[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 1 && entries[0] === '') throw new Error('no key given: expected a comma-separated list of 32-byte keys');
  return entries.map((entry, index) => {
    if (entry === '') throw new Error(`key ${index + 1} is empty (a stray comma?)`);
    const key = decodedKey(entry);
    if (key === undefined) throw new Error(`each key must be 32 bytes: 64 hex characters or 43-44 base64 characters (key ${index + 1} is not)`);
    // A placeholder (all zeros from a template, 0xff…) is a key anyone can guess: refuse it rather than seal with it.
    if (key.every((byte) => byte === key[0])) throw new Error(`key ${index + 1} has every byte the same value, so it is no secret: generate one with \`openssl rand -base64 32\``);
    return key;
  });
}

/** The 32 bytes `entry` spells in hex, base64 or base64url; undefined for any other shape. */
function decodedKey(entry: string): Buffer | undefined {
  if (HEX_KEY.test(entry)) return Buffer.from(entry, 'hex');
  if (BASE64_KEY.test(entry)) return Buffer.from(entry, entry.includes('-') || entry.includes('_') ? 'base64url' : 'base64');
  return undefined;
}

/**
 * A sealed value cannot be opened: its key is no longer configured, it is not in the sealed format,
 * or authentication fails (altered, or sealed for another context). The message says which, never
 * the plaintext or a key.
 */
export class TokenDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenDecryptionError';
  }
}

/** A key and its id, as the sealed format names it. */
interface CipherKey {
  id: string;
  key: Buffer;
}

/**
 * Seals and opens secrets (a session's refresh token) with the configured keys. The sealed form is
 * `v1.<key id>.<iv>.<ciphertext+tag>`, the last three parts base64url: the key id (the first 8
 * base64url characters of the key's SHA-256, which tells nothing usable about a random 256-bit key)
 * picks the decrypting key without trying all; the associated data binds the version, key id and
 * `context` (the session's handle), so a value copied into another session does not open.
 */
export class TokenCipher {
  readonly #encrypting: CipherKey;
  readonly #byId = new Map<string, Buffer>();

  /**
   * @param keys 32-byte keys, the first encrypting (parseEncryptionKeys' result).
   * @throws {Error} when there is no key, a key is not 32 bytes, or two different keys share an id.
   */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('TokenCipher needs at least one key');
    const cipherKeys = keys.map((key, index) => {
      if (key.length !== KEY_BYTES) throw new Error(`key ${index + 1} is not ${KEY_BYTES} bytes`);
      return { id: keyId(key), key: Buffer.from(key) };
    });
    for (const { id, key } of cipherKeys) {
      const known = this.#byId.get(id);
      // 48 bits make a clash of two random keys all but impossible; a repeated key is harmless.
      if (known !== undefined && !known.equals(key)) throw new Error('two keys share a key id; generate another key');
      this.#byId.set(id, key);
    }
    this.#encrypting = cipherKeys[0]!;
  }

  /**
   * Seals `plaintext` (UTF-8) with the first key and a fresh random 12-byte IV, bound to `context`.
   * @returns `v1.<key id>.<iv>.<ciphertext+tag>`: ASCII, 29 + ⌈4(n + 16)/3⌉ characters for n
   *   plaintext bytes (version, id, IV and dots, then the ciphertext and tag).
   */
  encrypt(plaintext: string, context: string): string {
    const { id, key } = this.#encrypting;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(id, context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, id, iv.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /**
   * Opens what {@link encrypt} sealed for the same `context`.
   * @returns the plaintext.
   * @throws {TokenDecryptionError} when `sealed` is not in the v1 format, when no configured key has
   *   its key id (the key was removed from SESSION_ENCRYPTION_KEY), or when authentication fails
   *   (a part altered, or another context).
   */
  decrypt(sealed: string, context: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new TokenDecryptionError(`not a ${VERSION} sealed token`);
    const [, id, ivText, dataText] = parts as [string, string, string, string];
    const key = this.#byId.get(id);
    if (key === undefined) throw new TokenDecryptionError(`no configured key has key id ${safeId(id)} (was it removed from SESSION_ENCRYPTION_KEY?)`);
    const iv = canonicalBase64url(ivText);
    const data = canonicalBase64url(dataText);
    if (iv?.length !== IV_BYTES || data === undefined || data.length < TAG_BYTES) throw new TokenDecryptionError(`not a ${VERSION} sealed token`);
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(id, context));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new TokenDecryptionError('authentication failed: the sealed token was altered or belongs to another context');
    }
  }
}

/** A key's id: the first 8 base64url characters of its SHA-256. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, KEY_ID_CHARS);
}

/**
 * The GCM associated data: version, key id and context. The prefix has a fixed length, so no two
 * (key id, context) pairs give the same bytes.
 */
function associatedData(id: string, context: string): Buffer {
  return Buffer.from(`${VERSION}.${id}.${context}`, 'utf8');
}

/**
 * The bytes of `text` when it is base64url in its one canonical spelling (no padding, unused bits
 * zero); undefined otherwise. Node's decoder ignores stray characters and unused bits, which would
 * let several spellings open alike.
 */
function canonicalBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** A key id fit for a message: only when it has a key id's shape, since the sealed text is untrusted. */
function safeId(id: string): string {
  return id.length === KEY_ID_CHARS && BASE64URL.test(id) ? id : '(malformed)';
}
