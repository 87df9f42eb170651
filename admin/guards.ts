import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../shared/errors.js';
import type { Handler, RequestContext } from './request-context.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Requires a session (spec §5.3): else 401 `Not authenticated`. */
export function requireSession(handler: Handler): Handler {
  return (ctx) => {
    if (!ctx.session) throw new GatewayError('NOT_AUTHENTICATED');
    return handler(ctx);
  };
}

/** Requires an admin session (spec §5.3): 401 without a session, 403 `Admin access required` without admin rights. */
export function requireAdmin(handler: Handler): Handler {
  return requireSession((ctx) => {
    if (!ctx.session!.user.isAdmin) throw new GatewayError('ADMIN_REQUIRED');
    return handler(ctx);
  });
}

/**
 * Requires the session's CSRF token in `X-CSRF-Token` on POST/PUT/PATCH/DELETE (spec §5.6,
 * DESIGN §4): else 403 `Invalid CSRF token`. Compared in constant time.
 */
export function requireCsrf(handler: Handler): Handler {
  return (ctx) => {
    if (MUTATING.has(ctx.req.method ?? '') && !csrfTokenMatches(ctx)) throw new GatewayError('INVALID_CSRF');
    return handler(ctx);
  };
}

function csrfTokenMatches(ctx: RequestContext): boolean {
  const sent = ctx.req.headers['x-csrf-token'];
  const expected = ctx.session?.csrfToken;
  if (typeof sent !== 'string' || !expected) return false;
  return constantTimeEqual(sent, expected);
}

/** Compares two secrets in time independent of where they differ (both hashed to equal length first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}
