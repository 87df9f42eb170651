import type { SessionUser } from '../types.js';
import type { CompiledAccessPolicy } from './access-policy.js';
import type { RuleGuard } from './service-rules.js';

/** What the gateway does with a request to a service once the caller is known (design.md §3.4–3.5). */
export type AccessVerdict = 'allow' | 'disabled' | 'deny' | 'sign-in';

/** What the verdict reads of a service and the request. */
export interface VerdictInput {
  readonly enabled: boolean;
  readonly requireAuth: boolean;
  /** The service's compiled access policy (undefined: any signed-in caller). */
  readonly access: CompiledAccessPolicy | undefined;
  /** The deciding rule's guard (`guardOfDecision`, service-rules.ts), undefined when none matched. */
  readonly guard: RuleGuard | undefined;
  /** The caller (a session or a verified bearer token), undefined when anonymous. */
  readonly user: SessionUser | undefined;
}

/**
 * The data plane's order of checks after its rules (design.md §3.5, §4.18), as
 * proxy/pipeline/access-decision.ts applies it to a request: a disabled service first (503), then
 * a `deny` rule (403), then sign-in where the rule (or, without one, `requireAuth`) needs it, then
 * the rule's own access policy (or the service's) for a caller who is known.
 */
export function accessVerdict({ enabled, requireAuth, access, guard, user }: VerdictInput): AccessVerdict {
  if (!enabled) return 'disabled';
  if (guard?.deny) return 'deny';
  if (user === undefined) return (guard === undefined ? requireAuth : guard.signIn) ? 'sign-in' : 'allow';
  const policy = guard === undefined ? access : guard.policy;
  return policy?.allows(user) === false ? 'deny' : 'allow';
}
