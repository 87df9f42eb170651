import type { Config } from '../../shared/config.js';
import type { SessionUser } from '../../shared/types.js';

/**
 * The session user from verified ID token (and userinfo) claims (OIDC Core 1.0 §5.1). `email` is
 * the claim only when `email_verified` is true, else `''` (design.md §4.2): an address the identity
 * provider has not verified may be anyone's, so it is never forwarded as `X-Forwarded-Email`,
 * audited, shown, or used as the name. `isAdmin` (design.md §4) is true when `sub` is in
 * ADMIN_SUBJECTS, or the verified email is in ADMIN_EMAILS, or the groups claim
 * (OIDC_GROUPS_CLAIM) names a group in ADMIN_GROUPS.
 */
export function sessionUserFromClaims(claims: Record<string, unknown>, config: Config): SessionUser {
  const sub = String(claims.sub);
  const email = claims.email_verified === true && typeof claims.email === 'string' ? claims.email : '';
  const name = firstText(claims.name, claims.preferred_username, email, sub);
  const { subjects, emails, groups } = config.admins;
  const isAdmin =
    subjects.has(sub) ||
    (email !== '' && emails.has(email.toLowerCase())) ||
    groupsOf(claims[config.oidc.groupsClaim]).some((group) => groups.has(group));
  return { sub, name, email, isAdmin };
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
