import { compileAccessPolicy } from '../../shared/services/access-policy.js';
import type { AccessPolicy, Service, SessionUser } from '../../shared/types.js';
import { ruleLine } from '../console/rule-text.js';
import type { DecidedBy, ExplainedRule, ExplainOutcome } from './explanation.js';

/** What the sentence of an explanation (service-explanation.ts) is made from. */
export interface ReasonParts {
  service: Service;
  rule: ExplainedRule | undefined;
  decidedBy: DecidedBy;
  outcome: ExplainOutcome;
  user: SessionUser | undefined;
}

/** A policy's lists in the order the policy checks them (shared/services/access-policy.ts), as a sentence names them. */
const POLICY_CHECKS: readonly (readonly [keyof AccessPolicy, string])[] = [
  ['subjects', 'their subject'],
  ['emails', 'their email'],
  ['emailDomains', 'their email domain'],
  ['groups', 'one of their groups'],
];
const NO_LISTS: AccessPolicy = { subjects: [], emails: [], emailDomains: [], groups: [] };

/** The explanation's one sentence (outcome `elsewhere` has its own, from explain-routing.ts). */
export function reasonFor(parts: ReasonParts): string {
  const { outcome, user } = parts;
  const who = whoDecides(parts);
  switch (outcome) {
    case 'disabled':
      return 'The service is disabled: every request to it gets 503 Service is disabled, whatever its rules say.';
    case 'deny':
      return `${who}: 403 Access denied for everyone, signed in or not.`;
    case 'public':
      return parts.decidedBy === 'corsPreflight'
        ? 'The service lets CORS preflights through without sign-in (corsPreflight: public) and no deny rule matches: the target answers the preflight.'
        : `${who}: no sign-in needed${user === undefined ? '' : ', and this caller is still named to the target'}.`;
    case 'sign-in required':
      return `${who}: an anonymous request must sign in first (401, or a browser is sent to sign in), then ${whoPasses(policyOf(parts))}${stepUp(parts)}.`;
    case 'allowed':
      return `${parts.rule === undefined ? 'No rule matches, and the service' : `${who} and`} lets this caller in: ${whyAllowed(policyOf(parts), user!)}${stepUp(parts)}.`;
    case 'refused':
      return `${who}: this caller is signed in but on none of ${parts.rule === undefined ? "the service's" : 'its'} access lists, so 403 Access denied.`;
    case 'elsewhere':
      return 'The request does not reach this service.';
  }
}

/** "Rule 2 (deny /internal) matches", or that the service's own settings decide. */
function whoDecides({ rule, service }: ReasonParts): string {
  if (rule !== undefined) return `Rule ${rule.index + 1} (${ruleLine(rule)}) matches`;
  const setting = service.requireAuth ? 'the service requires sign-in' : 'the service is open to anyone';
  return `No rule matches and ${setting}`;
}

/** The access policy that applies: the `require` rule's own, else the service's (null: any signed-in caller). */
function policyOf({ rule, service }: ReasonParts): AccessPolicy | null {
  return (rule === undefined ? service.access : rule.access) ?? null;
}

function whoPasses(policy: AccessPolicy | null): string {
  return compileAccessPolicy(policy) === undefined ? 'any signed-in caller passes' : 'only callers on its access list pass';
}

/** Which list let `user` in, asked of the same compiled policy code the data plane runs, one list at a time. */
function whyAllowed(policy: AccessPolicy | null, user: SessionUser): string {
  for (const [list, label] of POLICY_CHECKS) {
    if (policy !== null && compileAccessPolicy({ ...NO_LISTS, [list]: policy[list] })?.allows(user) === true) return `${label} is on the access list`;
  }
  return 'any signed-in caller passes';
}

/** The step-up fields of a rule or a service (design.md §4.18: a rule's replace the service's). */
type StepUpFields = { maxAge?: number | null; acr?: string[] | null };

/**
 * The step-up the deciding rule (or, where none decides, the service) asks of a signed-in caller,
 * said after who passes; '' for none. The explanation cannot know the caller's sign-in time or
 * `acr`, so it says what the gateway will check.
 */
function stepUp({ rule, service }: ReasonParts): string {
  const { maxAge, acr } = (rule ?? service) as StepUpFields;
  const parts: string[] = [];
  if (maxAge === 0) parts.push('a fresh sign-in (maxAge 0)');
  else if (typeof maxAge === 'number') parts.push(`a sign-in at most ${maxAge} seconds old`);
  if (acr && acr.length > 0) parts.push(`an acr of ${acr.join(' or ')}`);
  return parts.length === 0 ? '' : `; step-up: ${parts.join(' with ')}, else the browser signs in again`;
}
