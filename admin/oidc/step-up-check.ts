import { CALLBACK_LEEWAY_S, type StepUpRequest } from '../../shared/identity/step-up.js';
import type { SignIn } from './relying-party.js';

/**
 * The callback's check of a step-up sign-in (design.md §4.18): the ID token must meet what the
 * authorization request asked, OIDC Core 1.0 §3.1.2.1 (`max_age`: `auth_time` present and at most
 * that old, with {@link CALLBACK_LEEWAY_S} of leeway for clocks) and §5.5.1.1 (`acr_values`: an
 * `acr` among them, the values having been asked as voluntary claims, so the relying party checks).
 * @param signIn the ID token's `auth_time` (as `authTime`, epoch ms) and `acr`.
 * @param now epoch ms.
 * @returns why it falls short, in words fit for the page and the audit log; undefined when it meets it.
 */
export function stepUpShortfall(signIn: SignIn, asked: StepUpRequest, now: number): string | undefined {
  if (asked.maxAge !== undefined) {
    if (signIn.authTime === undefined) return 'its ID token has no auth_time.';
    const age = Math.round((now - signIn.authTime) / 1000);
    if (age > asked.maxAge + CALLBACK_LEEWAY_S) return `it was made ${age} seconds ago, more than the ${asked.maxAge} allowed.`;
  }
  if (asked.acr !== undefined) {
    if (signIn.acr === undefined) return 'its ID token has no acr.';
    if (!asked.acr.includes(signIn.acr)) return `its acr is ${signIn.acr}, not one of ${asked.acr.join(', ')}.`;
  }
  return undefined;
}
