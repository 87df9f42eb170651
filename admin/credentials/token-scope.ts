/**
 * What an admin API token may do (design.md §4.8), written as an OAuth scope: scope tokens
 * separated by a space (RFC 6749 §3.3). `read` allows GET and HEAD, `write` every method;
 * `sessions`, only beside `write`, also lets the token end an administrator's sessions, which
 * `write` alone may not (a leaked write token must not be able to sign out the admins who would
 * revoke it). The API takes and shows, and `api_tokens.scope` stores, one of {@link TOKEN_SCOPES}
 * as spelled there, so a scope has one spelling everywhere.
 */

/** One scope token. */
export type ScopeToken = 'read' | 'write' | 'sessions';

/** The scopes a token may have. */
export const TOKEN_SCOPES = ['read', 'write', 'write sessions'] as const;

export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** Whether a token of `scope` holds the scope token `wanted`. */
export function scopeIncludes(scope: TokenScope, wanted: ScopeToken): boolean {
  return scope.split(' ').includes(wanted);
}
