import type { SessionUser } from '../types.js';

/**
 * Step-up sign-in (design.md §4.18): what a service or a `require` rule asks of a caller's sign-in
 * (`maxAge`, `acr`), how a caller's sign-in is read from a token's claims (OIDC Core 1.0 §2
 * `auth_time`, `acr`, `amr`), whether it meets the requirement, and the requirement as the sign-in's
 * query (`max_age`, `acr_values`, OIDC Core 1.0 §3.1.2.1). Shared by the data plane, which
 * enforces, and the admin plane, which asks the provider and checks its answer.
 */

/**
 * A requirement: a sign-in at most `maxAge` seconds old, and an `acr` among `acr`; null or absent:
 * no requirement of that kind. A service and a compiled rule's guard are both one, so the data plane
 * reads them as they are, allocating nothing.
 */
export interface StepUp {
  readonly maxAge?: number | null | undefined;
  readonly acr?: readonly string[] | null | undefined;
}

/** A requirement as a login asks it and its transaction keeps it: only what is asked. */
export interface StepUpRequest {
  maxAge?: number;
  acr?: string[];
}

/** The largest `maxAge`, in seconds: a year (longer than any session lives, SESSION_TTL). */
export const MAX_STEP_UP_AGE_S = 31_536_000;
/** Most accepted `acr` values of one requirement. */
export const MAX_ACR_VALUES = 8;
/**
 * One `acr` value: 1–200 visible ASCII characters but `"`, `,` and `\` (acr values are often URIs or
 * URNs; a space separates them in `acr_values`, a comma in the console's syntax, and `"`/`\` would
 * need escaping in `WWW-Authenticate`, RFC 9470 §3).
 */
export const ACR_VALUE = /^[\x21\x23-\x2b\x2d-\x5b\x5d-\x7e]{1,200}$/;

/**
 * Leeway on `maxAge`, in seconds, for the clocks of the provider and the gateway and for the way
 * back to the page: the data plane accepts a sign-in up to `maxAge` + 60 s old, the callback only
 * up to `maxAge` + 30 s, so a sign-in the callback accepts is still accepted by the data plane for
 * at least 30 s, and a step-up cannot send the browser round again at once (`maxAge: 0` then means
 * a sign-in made in the last minute, asked with `prompt=login`).
 */
export const STEP_UP_LEEWAY_S = 60;
/** The callback's leeway (see {@link STEP_UP_LEEWAY_S}). */
export const CALLBACK_LEEWAY_S = STEP_UP_LEEWAY_S / 2;

/** Most `amr` entries kept, and the longest `acr`/`amr` entry kept (a provider's claim, not ours to store unbounded). */
const MAX_AMR = 16;
const MAX_CLAIM_LENGTH = 200;

/** True when `need` asks anything. */
export function asksStepUp(need: StepUp): boolean {
  return need.maxAge != null || need.acr != null;
}

/**
 * The sign-in a token's claims describe (an ID token's at sign-in and refresh, a bearer token's):
 * `authTime` in epoch ms from `auth_time` (seconds), `acr`, `amr`; each only when the claim is
 * there and well-formed.
 */
export function signInOf(claims: Record<string, unknown>): Pick<SessionUser, 'authTime' | 'acr' | 'amr'> {
  const { auth_time: authTime, acr, amr } = claims;
  const amrList = Array.isArray(amr) ? amr.filter((m): m is string => typeof m === 'string' && m.length <= MAX_CLAIM_LENGTH).slice(0, MAX_AMR) : [];
  return {
    ...(typeof authTime === 'number' && Number.isFinite(authTime) && authTime > 0 ? { authTime: authTime * 1000 } : {}),
    ...(typeof acr === 'string' && acr !== '' && acr.length <= MAX_CLAIM_LENGTH ? { acr } : {}),
    ...(amrList.length > 0 ? { amr: amrList } : {}),
  };
}

/**
 * Whether a sign-in (`authTime` epoch ms, `acr`) meets `need` at `now` (epoch ms) with `leewayS`
 * seconds of leeway on its age: an unknown `authTime` never meets a `maxAge`, an unknown `acr`
 * never meets an `acr` list (OIDC Core 1.0 §3.1.2.1, §5.5.1.1).
 */
export function meetsStepUp(signIn: Pick<SessionUser, 'authTime' | 'acr'>, need: StepUp, now: number, leewayS: number): boolean {
  const { maxAge, acr } = need;
  if (maxAge != null && (signIn.authTime === undefined || now - signIn.authTime > (maxAge + leewayS) * 1000)) return false;
  return acr == null || (signIn.acr !== undefined && acr.includes(signIn.acr));
}

/** True when the data plane must step `user` up for `need` (design.md §4.18). */
export function fallsShort(user: SessionUser, need: StepUp, now: number): boolean {
  return asksStepUp(need) && !meetsStepUp(user, need, now, STEP_UP_LEEWAY_S);
}

/**
 * `need` as the sign-in's query parameters, each starting with `&`: `&max_age=<s>` and
 * `&acr_values=<space-separated values>` (OIDC Core 1.0 §3.1.2.1 names), URL-encoded.
 */
export function stepUpQuery(need: StepUp): string {
  const maxAge = need.maxAge == null ? '' : `&max_age=${need.maxAge}`;
  const acr = need.acr == null ? '' : `&acr_values=${encodeURIComponent(need.acr.join(' '))}`;
  return maxAge + acr;
}

/**
 * The requirement a login's query asks (`max_age`, `acr_values`), undefined when it asks none.
 * Anyone can write that query: it only says what to ask the provider for and what the callback
 * checks; the data plane enforces the service's own requirement whatever it was.
 * @returns null when a parameter is repeated or malformed (an integer 0–{@link MAX_STEP_UP_AGE_S};
 *   1–{@link MAX_ACR_VALUES} values matching {@link ACR_VALUE}, separated by one space).
 */
export function readStepUpQuery(params: URLSearchParams): StepUpRequest | undefined | null {
  const maxAges = params.getAll('max_age');
  const acrs = params.getAll('acr_values');
  if (maxAges.length > 1 || acrs.length > 1) return null;
  if (maxAges.length === 0 && acrs.length === 0) return undefined;
  const request: StepUpRequest = {};
  if (maxAges[0] !== undefined) {
    if (!/^\d{1,8}$/.test(maxAges[0]) || Number(maxAges[0]) > MAX_STEP_UP_AGE_S) return null;
    request.maxAge = Number(maxAges[0]);
  }
  if (acrs[0] !== undefined) {
    const values = acrs[0].split(' ');
    if (values.length > MAX_ACR_VALUES || !values.every((value) => ACR_VALUE.test(value))) return null;
    request.acr = [...new Set(values)];
  }
  return request;
}
