import type { AccessPolicy, ServiceRule } from '../../shared/types.js';

/**
 * A service's rules (design.md §4.18) as the console's service form writes them, one per line
 * (README "Rules inside a service"): the action, then optionally its methods (`GET,HEAD`), a
 * `require` rule's policy lists (`groups=admins,ops emails=… domains=… subjects=…`) and step-up
 * (`maxAge=300 acr=mfa,hwk`, design.md §4.18), then its paths (`/hooks/* /health`):
 *
 *     public POST /hooks/*
 *     deny /internal
 *     require groups=admins /admin /api/*\/admin
 *     require maxAge=300 acr=mfa /admin/billing
 *
 * service-form.js reads the lines back into the API's rules the same way (an entry holding a
 * space or a comma cannot be written so: the API takes it).
 */

/** The policy lists by the word a line names them with. */
export const RULE_POLICY_WORDS: Readonly<Record<string, keyof AccessPolicy>> = {
  groups: 'groups',
  emails: 'emails',
  domains: 'emailDomains',
  subjects: 'subjects',
};

/** `rule` as a line of the form's rules textarea. */
export function ruleLine(rule: ServiceRule): string {
  const words: string[] = [rule.action];
  if (rule.methods !== undefined) words.push(rule.methods.join(','));
  for (const [word, list] of Object.entries(RULE_POLICY_WORDS)) {
    const entries = rule.access?.[list] ?? [];
    if (entries.length > 0) words.push(`${word}=${entries.join(',')}`);
  }
  if (rule.maxAge !== undefined) words.push(`maxAge=${rule.maxAge}`);
  if (rule.acr !== undefined) words.push(`acr=${rule.acr.join(',')}`);
  words.push(...rule.paths);
  return words.join(' ');
}
