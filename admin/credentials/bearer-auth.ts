import type { ApiToken, ApiTokens } from './api-tokens.js';

/**
 * The admin API token a request presents in `Authorization: Bearer <token>` (design.md §4.8,
 * RFC 6750 §2.1): the live token; `'invalid'` for a bearer credential that is none (unknown,
 * expired, revoked, not `ght_…`, or empty); null when the request has no bearer credential (no
 * `Authorization`, or another scheme such as `Basic`), and acts with its session cookie, if any.
 */
export type PresentedToken = ApiToken | 'invalid' | null;

/** `Bearer`, in any case (RFC 9110 §11.1), then the credential after one or more spaces, if any. */
const BEARER = /^bearer(?:$| +(.*)$)/i;

/** The token `authorization` presents, looked up in `tokens` (see {@link PresentedToken}). */
export function presentedToken(authorization: string | undefined, tokens: Pick<ApiTokens, 'authenticate'>): PresentedToken {
  const match = authorization === undefined ? null : BEARER.exec(authorization.trim());
  if (!match) return null;
  return tokens.authenticate(match[1] ?? '') ?? 'invalid';
}

/** Whether `token` is a live token (not absent, not invalid). */
export const isLiveToken = (token: PresentedToken): token is ApiToken => token !== null && token !== 'invalid';
