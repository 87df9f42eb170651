import type { AccessPolicy, SessionUser } from '../types.js';

/** A service's access policy, ready for the request path (design.md §4.7). */
export interface CompiledAccessPolicy {
  /** True when `user` matches any entry of the policy. */
  allows(user: SessionUser): boolean;
}

/**
 * Compiles a service's `access` once per registry snapshot, for the data plane's route table
 * (proxy/routing/route-table.ts) and the admin plane's home page (admin/routes/page-routes.ts), so a
 * request only looks up sets: `sub` exactly, the verified email (`user.email`, which is `''`
 * unless verified, design.md §4.2) and the part after its last `@` lowercased (the registry stores
 * emails and domains lowercased), each group exactly; checked in that order, the groups last.
 * @returns undefined for no policy (null, absent, or every list empty): any signed-in caller.
 */
export function compileAccessPolicy(policy: AccessPolicy | null | undefined): CompiledAccessPolicy | undefined {
  if (!policy) return undefined;
  const subjects = new Set(policy.subjects);
  const emails = new Set(policy.emails);
  const domains = new Set(policy.emailDomains);
  const groups = new Set(policy.groups);
  if (subjects.size + emails.size + domains.size + groups.size === 0) return undefined;
  const byEmail = emails.size + domains.size > 0;
  return {
    allows(user) {
      if (subjects.has(user.sub)) return true;
      if (byEmail && user.email !== '') {
        const email = user.email.toLowerCase();
        if (emails.has(email) || domains.has(email.slice(email.lastIndexOf('@') + 1))) return true;
      }
      if (groups.size > 0 && user.groups !== undefined) {
        for (const group of user.groups) if (groups.has(group)) return true;
      }
      return false;
    },
  };
}
