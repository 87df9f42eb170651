import { accessVerdict, type AccessVerdict } from '../../shared/services/access-verdict.js';
import { compileAccessPolicy } from '../../shared/services/access-policy.js';
import { compileServiceRules, guardOfDecision, NO_RULE, PUBLIC_PREFLIGHT } from '../../shared/services/service-rules.js';
import { routingKey } from '../../shared/routing/routing-key.js';
import type { Service } from '../../shared/types.js';
import type { ExplainInput } from './explain-input.js';
import { elsewhere, prefixKeyOf } from './explain-routing.js';
import type { DecidedBy, ExplainOutcome, Explanation } from './explanation.js';
import { reasonFor } from './explanation-reason.js';

/**
 * "Who can reach this?" (design.md §4.18): which part of a service decides a request and why,
 * computed with the data plane's own code: the routing key (shared/routing/), the compiled rules'
 * `decide` (shared/services/service-rules.ts, which proxy/pipeline/rule-decision.ts calls), the
 * compiled access policies and the order of checks (shared/services/access-verdict.ts). Read only.
 */

/**
 * Explains `input` for `service`; `services` is the whole registry (another service may take the path).
 * Pure: the same question about the same registry always has the same answer.
 */
export function explainService(service: Service, services: readonly Service[], input: ExplainInput): Explanation {
  const key = routingKey(input.path);
  const asked = { method: input.method, path: input.path, routingKey: key };
  const away = elsewhere(service, services, key, input.host);
  if (away !== undefined) return { ...asked, matchesService: false, ...away, decidedBy: 'routing', outcome: 'elsewhere' };
  const rules = compileServiceRules(service);
  const decided = rules === undefined ? NO_RULE : rules.decide(input.method, key, prefixKeyOf(service).length, input.corsPreflight);
  const guard = rules && guardOfDecision(rules, decided);
  const verdict = accessVerdict({ enabled: service.enabled, requireAuth: service.requireAuth, access: compileAccessPolicy(service.access), guard, user: input.user });
  const rule = decided >= 0 && service.enabled ? { ...service.rules![decided]!, index: decided } : undefined;
  const decidedBy: DecidedBy = rule !== undefined ? 'rule' : decided === PUBLIC_PREFLIGHT && service.enabled ? 'corsPreflight' : 'service';
  const signIn = guard === undefined ? service.requireAuth : guard.signIn;
  const outcome = outcomeOf(verdict, guard?.deny === true, signIn && input.user !== undefined);
  const reason = reasonFor({ service, rule, decidedBy, outcome, user: input.user });
  return { ...asked, matchesService: true, decidedBy, ...(rule === undefined ? {} : { rule }), outcome, reason };
}

/** The data plane's verdict as an outcome: a `deny` rule's 403 apart from a policy's, a signed-in pass apart from a public one. */
function outcomeOf(verdict: AccessVerdict, denyRule: boolean, signedInPass: boolean): ExplainOutcome {
  switch (verdict) {
    case 'disabled':
      return 'disabled';
    case 'deny':
      return denyRule ? 'deny' : 'refused';
    case 'sign-in':
      return 'sign-in required';
    case 'allow':
      return signedInPass ? 'allowed' : 'public';
  }
}
