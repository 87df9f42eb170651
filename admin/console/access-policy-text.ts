import type { AccessPolicy } from '../../shared/types.js';

/** The lists of an access policy as the console names them, in the form's order. */
export const POLICY_LISTS: readonly { key: keyof AccessPolicy; label: string }[] = [
  { key: 'groups', label: 'Groups' },
  { key: 'emails', label: 'Emails' },
  { key: 'emailDomains', label: 'Email domains' },
  { key: 'subjects', label: 'Subjects' },
];

/** What a service without a policy allows (design.md §4.7). */
export const ANY_SIGNED_IN_USER = 'Any signed-in user';

/**
 * An access policy as lines of text, one per list that has entries (`Groups: staff, ops`), or
 * `[ANY_SIGNED_IN_USER]` for none. Takes `unknown` because the audit log's details are read back
 * from JSON; anything but a policy's lists reads as no policy.
 */
export function policyLines(policy: unknown): string[] {
  if (typeof policy !== 'object' || policy === null) return [ANY_SIGNED_IN_USER];
  const lists = policy as Partial<Record<keyof AccessPolicy, unknown>>;
  const lines = POLICY_LISTS.flatMap(({ key, label }) => {
    const entries = lists[key];
    return Array.isArray(entries) && entries.length > 0 ? [`${label}: ${entries.join(', ')}`] : [];
  });
  return lines.length > 0 ? lines : [ANY_SIGNED_IN_USER];
}
