import { createHash } from 'node:crypto';
import { isWellFormedSecret } from '../../shared/identity/secrets.js';

/**
 * Binds a login to the browser that started it (design.md §4.1). The `state` travels in URLs (the
 * authorization request, the callback), so on its own it proves nothing: whoever holds an unused
 * callback URL could finish the victim's login in their own browser. The browser therefore also
 * holds a random key in its login-transaction cookie, which never appears in a URL, and the
 * transaction stores only the key's SHA-256; the callback must present a key with that hash.
 * One key serves all of a browser's logins in flight (several tabs), so finishing one leaves the
 * others intact.
 */

/** `value` when it is a well-formed browser key (from the transaction cookie), else undefined. */
export function browserKeyFrom(value: string | undefined): string | undefined {
  return value !== undefined && isWellFormedSecret(value) ? value : undefined;
}

/** What a transaction stores of the key: its SHA-256, hex. */
export function browserKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
