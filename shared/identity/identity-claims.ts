import type { Config } from '../config/config.js';
import type { SessionUser } from '../types.js';

/**
 * The caller from verified claims (OIDC Core 1.0 §5.1): an ID token's (and userinfo's) at sign-in,
 * a bearer token's in the data plane (design.md §4.7), so both are read the same way. `email` is
 * the claim only when `email_verified` is true, else `''` (design.md §4.2): an address the identity
 * provider has not verified may be anyone's, so it is never forwarded as `X-Forwarded-Email`,
 * audited, shown, or used as the name. `isAdmin` (design.md §4) is true when `sub` is in
 * ADMIN_SUBJECTS, or the verified email is in ADMIN_EMAILS, or the groups claim
 * (OIDC_GROUPS_CLAIM) names a group in ADMIN_GROUPS. `groups` is that claim's list.
 */
export function userFromClaims(claims: Record<string, unknown>, config: Pick<Config, 'oidc' | 'admins'>): SessionUser {
  const sub = String(claims.sub);
  const email = claims.email_verified === true && typeof claims.email === 'string' ? claims.email : '';
  const name = firstText(claims.name, claims.preferred_username, email, sub);
  const groups = groupsOf(claims[config.oidc.groupsClaim]);
  const admins = config.admins;
  const isAdmin =
    admins.subjects.has(sub) ||
    (email !== '' && admins.emails.has(email.toLowerCase())) ||
    groups.some((group) => admins.groups.has(group));
  return { sub, name, email, isAdmin, groups };
}

function firstText(...values: unknown[]): string {
  return values.find((value): value is string => typeof value === 'string' && value.length > 0) ?? '';
}

/** A groups claim may be an array of strings or one space/comma separated string. */
function groupsOf(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((group): group is string => typeof group === 'string');
  if (typeof claim === 'string') return claim.split(/[\s,]+/).filter(Boolean);
  return [];
}
