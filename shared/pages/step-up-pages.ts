import type { StepUp } from '../identity/step-up.js';
import { html } from './html.js';
import { page } from './layout.js';

/**
 * The pages of step-up sign-in (design.md §4.18): the 401 that asks a person to sign in again, and
 * the 403 of a sign-in that came back without what the service needs.
 */

/** What `needs` asks, in words: "a sign-in within the last 5 minutes, with one of: mfa, hwk". */
export function stepUpInWords(needs: StepUp): string {
  const parts: string[] = [];
  if (needs.maxAge != null) parts.push(needs.maxAge === 0 ? 'a new sign-in' : `a sign-in within the last ${durationInWords(needs.maxAge)}`);
  if (needs.acr != null) parts.push(`${parts.length === 0 ? 'a sign-in ' : ''}with one of these authentication levels (acr): ${needs.acr.join(', ')}`);
  return parts.join(', ');
}

/**
 * The 401 page of a request whose session falls short of the service's step-up, when it is not a
 * navigation that could be redirected: a link to `login` (the step-up sign-in, returning to the page).
 */
export function signInAgainPage(needs: StepUp, login: string): string {
  return page(
    'Sign in again',
    html`<h1>Sign in again</h1>
<p>This part of the service needs ${stepUpInWords(needs)}.</p>
<p><a class="button" id="login" href="${login}">Sign in again</a></p>`,
  );
}

/**
 * The 403 page of a step-up sign-in whose ID token does not meet what was asked (OIDC Core 1.0
 * §3.1.2.1 `auth_time`, §5.5.1.1 `acr`): the session is kept as it was. `retry`: the same sign-in again.
 */
export function stepUpRefusedPage(needs: StepUp, reason: string, retry: string): string {
  return page(
    'Stronger sign-in needed',
    html`<h1>Stronger sign-in needed</h1>
<p>This service needs ${stepUpInWords(needs)}.</p>
<p id="reason">The sign-in at the identity provider did not provide it: ${reason}</p>
<p><a class="button" id="retry" href="${retry}">Try again</a> <a href="/">Home</a></p>`,
  );
}

/** Seconds as the largest whole unit: `90` → "90 seconds", `300` → "5 minutes", `7200` → "2 hours". */
function durationInWords(seconds: number): string {
  const units: Array<[number, string]> = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) if (seconds % size === 0) return plural(seconds / size, name);
  return plural(seconds, 'second');
}

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
