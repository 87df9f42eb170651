import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The gateway's secrets and how they are compared: session ids, CSRF tokens, login browser keys
 * and the random part of admin API tokens are 256 random bits, base64url (43 characters). Secrets
 * are never logged.
 */

/** 256 random bits, base64url: the shape of every secret below. */
function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new session id, the session cookie's value. */
export const newSessionId = randomSecret;

/**
 * A new session handle (the session's public id in the sessions API): 128 random bits, base64url
 * (22 characters), drawn on its own so it says nothing about the session id.
 */
export const newSessionHandle = (): string => randomBytes(16).toString('base64url');

/** Whether `value` has a session handle's shape; anything else is never looked up. */
export function isWellFormedHandle(value: string): boolean {
  return value.length === 22 && /^[A-Za-z0-9_-]+$/.test(value);
}

/** A new per-session CSRF token (design.md §4.3). */
export const newCsrfToken = randomSecret;

/** A new login browser key (admin/oidc/browser-binding.ts). */
export const newBrowserKey = randomSecret;

/** A new hand-off key: the value of a service host's `gw_handoff` cookie (design.md §4.16). */
export const newHandoffKey = randomSecret;

/**
 * What travels in URLs of a hand-off key (the sign-in link's `bind`) and what its code keeps: its
 * SHA-256, base64url (43 characters), so the key itself never leaves the service host's cookie.
 */
export function handoffBinding(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/**
 * What every admin API token's secret starts with (design.md §4.8): secret scanners (GitHub's,
 * gitleaks) match a leaked token by it, and the gateway refuses anything else without a lookup.
 */
export const API_TOKEN_PREFIX = 'ght_';

/** A new admin API token's secret: {@link API_TOKEN_PREFIX} and 256 random bits (47 characters). */
export const newApiTokenSecret = (): string => API_TOKEN_PREFIX + randomSecret();

/** Whether `value` has the shape of an admin API token's secret; anything else is never looked up. */
export function isWellFormedApiTokenSecret(value: string): boolean {
  return value.startsWith(API_TOKEN_PREFIX) && isWellFormedSecret(value.slice(API_TOKEN_PREFIX.length));
}

/** Whether `value` has the shape every secret here has; anything else is never looked up. */
export function isWellFormedSecret(value: string): boolean {
  return value.length === 43 && /^[A-Za-z0-9_-]+$/.test(value);
}

/** Compares two secrets in time independent of where they differ (both hashed to equal length first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}
