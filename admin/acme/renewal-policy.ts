/**
 * When the admin process orders a host's certificate again (design.md §4.15), in epoch ms.
 *
 * Renewal: at two thirds of the certificate's lifetime (Let's Encrypt's advice: a 90-day
 * certificate is renewed with 30 days left), so a renewal that fails has a third of the lifetime
 * to be retried. A CA that offers ACME Renewal Information (RFC 9773) may move it earlier
 * ({@link suggestedRenewalTime}), never later.
 *
 * Retries: 10 s after the first failure, doubling with each failure in a row, at most 6 hours
 * apart; never past the renewal-or-expiry time that made the order due. A CA outage is thus
 * bridged within seconds once it ends, and a host that cannot be validated costs the CA (and its
 * rate limit on failed validations, 5 an hour per host at Let's Encrypt) a few orders an hour.
 */

/** The first retry's delay, in ms. */
export const FIRST_RETRY_MS = 10_000;
/** The longest delay between retries, in ms. */
export const MAX_RETRY_MS = 6 * 3600_000;

/** The time to renew a certificate valid from `notBefore` to `notAfter`: two thirds through its lifetime. */
export function renewalTime(notBefore: number, notAfter: number): number {
  return notBefore + Math.floor(((notAfter - notBefore) * 2) / 3);
}

/**
 * The renewal time when the CA suggests `window` (RFC 9773 §4.2), epoch ms: now when the window has
 * begun; else a uniformly random moment in it (the `current` renewal time kept when it already
 * lies in it, so asking again does not drift the time toward the window's start), but never later
 * than `twoThirds` ({@link renewalTime}).
 * @param random a number in [0, 1) (Math.random's).
 */
export function suggestedRenewalTime(window: { start: number; end: number }, current: number, twoThirds: number, now: number, random = Math.random()): number {
  if (window.start <= now) return now;
  const chosen = current >= window.start && current <= window.end ? current : window.start + Math.floor(random * (window.end - window.start));
  return Math.min(chosen, twoThirds);
}

/** The delay before trying again after `failures` failed orders in a row (1 or more), in ms. */
export function retryDelay(failures: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(Math.max(failures - 1, 0), 30), MAX_RETRY_MS);
}
