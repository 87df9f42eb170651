import { constantTimeEqual } from '../guards.js';

/**
 * Logins one browser may have in flight at once (several tabs sent to sign in, say after a
 * session expired): the transaction cookie lists that many `state`s, newest first.
 */
export const MAX_PENDING_LOGINS = 5;

/** `state`s are base64url (what openid-client's randomState makes); `.` separates them in the cookie. */
const SEPARATOR = '.';
const STATE = /^[A-Za-z0-9_-]{1,128}$/;

/** The `state`s a transaction cookie value lists (anything malformed is ignored). */
export function pendingStates(cookieValue: string | undefined): string[] {
  if (!cookieValue) return [];
  return cookieValue.split(SEPARATOR).filter((state) => STATE.test(state));
}

/** `states` with `state` in front, the oldest dropped past {@link MAX_PENDING_LOGINS}. */
export function withState(states: readonly string[], state: string): string[] {
  return [state, ...states.filter((other) => other !== state)].slice(0, MAX_PENDING_LOGINS);
}

/** `states` without `state`. */
export function withoutState(states: readonly string[], state: string): string[] {
  return states.filter((other) => other !== state);
}

/**
 * Whether `state` (from the identity provider's response) is one this browser started: compared
 * with every listed state in constant time, so the answer's timing says nothing about which.
 */
export function isPendingState(states: readonly string[], state: string): boolean {
  let found = false;
  for (const pending of states) found = constantTimeEqual(pending, state) || found;
  return found;
}

/** The cookie value for `states`. */
export function pendingStatesValue(states: readonly string[]): string {
  return states.join(SEPARATOR);
}
