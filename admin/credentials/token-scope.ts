/**
 * What an admin API token may do (design.md §4.8), written as an OAuth scope: scope tokens
 * separated by spaces, their order insignificant (RFC 6749 §3.3). `read` allows GET and HEAD,
 * `write` every method; `sessions`, only beside `write`, also lets the token end an
 * administrator's sessions, which `write` alone may not (a leaked write token must not be able to
 * sign out the admins who would revoke it). Stored as written here in `api_tokens.scope`.
 */

/** One scope token. */
export type ScopeToken = 'read' | 'write' | 'sessions';

/** The scopes a token may have, in their canonical spelling (tokens in this order, one space apart). */
export const TOKEN_SCOPES = ['read', 'write', 'write sessions'] as const;

export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** The canonical order of the scope tokens, so that `sessions write` is stored and shown as `write sessions`. */
const ORDER: readonly string[] = ['read', 'write', 'sessions'];

/**
 * `scope` in its canonical spelling: split on whitespace, each token once, known tokens in
 * {@link ORDER} (unknown ones after them, so the result is no {@link TokenScope} and validation
 * refuses it). Pure; never throws.
 */
export function canonicalScope(scope: string): string {
  const tokens = [...new Set(scope.split(/\s+/).filter(Boolean))];
  const rank = (token: string) => (ORDER.includes(token) ? ORDER.indexOf(token) : ORDER.length);
  return tokens.sort((a, b) => rank(a) - rank(b)).join(' ');
}

/** Whether a token of `scope` holds the scope token `wanted`. */
export function scopeIncludes(scope: TokenScope, wanted: ScopeToken): boolean {
  return scope.split(' ').includes(wanted);
}
