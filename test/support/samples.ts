/** Sample records of each kind the gateway stores, with test defaults (not a test file itself). */
import { randomUUID } from 'node:crypto';
import { newSigningKey, publicHalf } from '../../admin/credentials/assertion-keys.js';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import { newCsrfToken, newSessionHandle } from '../../shared/identity/secrets.js';
import type { AccessLogEntry, Service, Session } from '../../shared/types.js';

/** A live session (expires in an hour unless overridden), with a new handle, signed in now from 127.0.0.1. */
export function sampleSession(overrides: Partial<Session> = {}): Session {
  const now = Date.now();
  return {
    handle: newSessionHandle(),
    user: { sub: `sub-${randomUUID()}`, name: 'Grace Hopper', email: 'grace@example.com', isAdmin: false, groups: ['engineering'] },
    csrfToken: newCsrfToken(),
    idToken: 'header.payload.signature',
    createdAt: now,
    expiresAt: now + 3_600_000,
    lastSeenAt: now,
    checkedAt: now,
    ipAddress: '127.0.0.1',
    userAgent: 'test-agent/1.0',
    ...overrides,
  };
}

/** A registry entry named after `n`. */
export function sampleService(n: number, overrides: Partial<Service> = {}): Service {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    name: `Service ${n}`,
    path: `/svc-${n}`,
    targetUrl: `http://127.0.0.1:${10_000 + n}/base`,
    requireAuth: n % 2 === 0,
    description: '',
    enabled: true,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

/** A registry entry with test defaults (a fresh id, named after its path, public, enabled), for a gateway's registry. */
export function service(fields: Partial<Service> & Pick<Service, 'path' | 'targetUrl'>): Service {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    name: fields.path,
    requireAuth: false,
    description: '',
    enabled: true,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

export const LOG_SERVICE = '11111111-1111-4111-8111-111111111111';

/** An access-log record for request `n` of {@link LOG_SERVICE}, with a fresh event id. */
export function sampleEntry(n: number, overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId: LOG_SERVICE,
    userId: n % 3 === 0 ? null : `user-${n}`,
    path: `/svc/items/${n}?q=${n}`,
    method: n % 2 === 0 ? 'GET' : 'POST',
    statusCode: 200 + (n % 5),
    responseTimeMs: n % 100,
    ipAddress: '198.51.100.7',
    timestamp: Date.UTC(2025, 0, 1) + n,
    ...overrides,
  };
}

/**
 * An assertion key set as the admin plane publishes it (design.md §4.7): a fresh signing key, and
 * after its public half those of `retired` more fresh keys.
 */
export async function sampleAssertionKeySet(retired = 0): Promise<AssertionKeySet> {
  const [signing, ...others] = await Promise.all(Array.from({ length: retired + 1 }, () => newSigningKey()));
  return { signing: signing!, published: [signing!, ...others].map(publicHalf) };
}
