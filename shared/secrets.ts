import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The gateway's secrets and how they are compared: session ids, CSRF tokens and login browser
 * keys are 256 random bits, base64url (43 characters). Secrets are never logged.
 */

/** 256 random bits, base64url: the shape of every secret below. */
function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new session id, the session cookie's value. */
export const newSessionId = randomSecret;

/** A new per-session CSRF token (design.md §4.3). */
export const newCsrfToken = randomSecret;

/** A new login browser key (admin/oidc/browser-binding.ts). */
export const newBrowserKey = randomSecret;

/** Whether `value` has the shape every secret here has; anything else is never looked up. */
export function isWellFormedSecret(value: string): boolean {
  return value.length === 43 && /^[A-Za-z0-9_-]+$/.test(value);
}

/** Compares two secrets in time independent of where they differ (both hashed to equal length first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}
