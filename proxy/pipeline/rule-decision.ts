import type { IncomingMessage } from 'node:http';
import { guardOfDecision, type CompiledRules, type RuleGuard } from '../../shared/services/service-rules.js';
import type { Route } from '../routing/route-table.js';

/**
 * The data plane's decision by a service's rules (design.md §4.18), for a route that has some
 * (`route.rules`): `CompiledRules.decide` (service-rules.ts), which the admin plane's explanation
 * calls too, so both read a request alike: a `deny` rule that matches first wins; then a real CORS
 * preflight passes when the service makes preflights public (a browser never sends credentials
 * with one, Fetch §4.8, so it could not sign in); then the first matching rule. `key` is the
 * request path's routing key (routing-key.ts), so every spelling of a path meets the same rule.
 * @returns the guard to apply, or undefined when the service's own `requireAuth` and `access` decide.
 */
export function ruleGuardFor(rules: CompiledRules, route: Route, req: Pick<IncomingMessage, 'method' | 'headers'>, key: string, hasBody: boolean): RuleGuard | undefined {
  // the preflight's headers are read only where they could matter
  const preflight = rules.publicPreflight && isCorsPreflight(req, hasBody);
  return guardOfDecision(rules, rules.decide(req.method ?? '', key, route.key.length, preflight));
}

/**
 * A CORS preflight as browsers send it (Fetch §4.8 "CORS-preflight fetch"): `OPTIONS` with
 * `Origin` and `Access-Control-Request-Method`, and no body. Anything else is an ordinary request,
 * so an `OPTIONS` carrying content cannot reach the target unauthenticated.
 */
function isCorsPreflight(req: Pick<IncomingMessage, 'method' | 'headers'>, hasBody: boolean): boolean {
  if (req.method !== 'OPTIONS' || hasBody) return false;
  const { headers } = req;
  return headers.origin !== undefined && typeof headers['access-control-request-method'] === 'string' && headers['access-control-request-method'] !== '';
}
