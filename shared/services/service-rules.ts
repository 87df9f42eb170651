import type { Service, ServiceRule } from '../types.js';
import type { StepUp } from '../identity/step-up.js';
import { compileAccessPolicy, type CompiledAccessPolicy } from './access-policy.js';

/**
 * A service's rules (design.md §4.18), compiled once per registry snapshot beside its access
 * policy (proxy/routing/route-table.ts), so a request compares strings and looks up sets only.
 */

/**
 * What a matching rule asks of a request: made once per rule, so deciding allocates nothing. As a
 * {@link StepUp}, a `require` rule's own step-up (`maxAge`, `acr`; undefined: none), replacing the
 * service's as its policy does.
 */
export interface RuleGuard extends StepUp {
  /** `deny`: 403 `Access denied` whoever asks. */
  readonly deny: boolean;
  /** True for `require`: the caller must be signed in (a session, or a bearer token). */
  readonly signIn: boolean;
  /** For `require`: who may pass (its own policy, not the service's); undefined: any signed-in caller. */
  readonly policy: CompiledAccessPolicy | undefined;
}

/** A `public` rule's guard, and a CORS preflight's under `corsPreflight: "public"`. */
export const PUBLIC_GUARD: RuleGuard = { deny: false, signIn: false, policy: undefined };
const DENY_GUARD: RuleGuard = { deny: true, signIn: false, policy: undefined };

/** {@link CompiledRules.decide}'s answer when no rule matches: the service's own settings decide. */
export const NO_RULE = -1;
/** {@link CompiledRules.decide}'s answer for a CORS preflight let through by `corsPreflight: "public"`. */
export const PUBLIC_PREFLIGHT = -2;

/** A service's compiled rules. */
export interface CompiledRules {
  /** True when CORS preflights pass without sign-in (`corsPreflight: "public"`). */
  readonly publicPreflight: boolean;
  /** Each rule's guard, at the rule's index in `service.rules`. */
  readonly guards: readonly RuleGuard[];
  /**
   * Which part of the service decides a request (design.md §4.18), for the data plane
   * (proxy/pipeline/rule-decision.ts) and for the admin plane's explanation alike: the first rule
   * matching `method` (as sent; compared in capitals) and the path `key[from…]` (a routing key,
   * routing-key.ts, from the end of the service's prefix: `''` or `/…`) when it is a `deny` rule;
   * else {@link PUBLIC_PREFLIGHT} when `preflight` (the request is a real CORS preflight, Fetch
   * §4.8) and the service makes preflights public; else that first matching rule.
   * @returns the rule's index in {@link guards}, {@link PUBLIC_PREFLIGHT}, or {@link NO_RULE}.
   */
  decide(method: string, key: string, from: number, preflight: boolean): number;
}

interface CompiledRule {
  /** Each path's segments, lowercased as the routing key is; `*` matches any one segment. */
  readonly patterns: readonly (readonly string[])[];
  /** Undefined: every method. */
  readonly methods: ReadonlySet<string> | undefined;
  readonly guard: RuleGuard;
}

const SLASH = 0x2f;

/**
 * Compiles `service.rules` and `corsPreflight`.
 * @returns undefined for a service without rules whose preflights need sign-in as any request:
 *   the request path then pays one check.
 */
export function compileServiceRules(service: Service): CompiledRules | undefined {
  const rules = (service.rules ?? []).map(compileRule);
  const publicPreflight = service.corsPreflight === 'public';
  if (rules.length === 0 && !publicPreflight) return undefined;
  const guards = rules.map((rule) => rule.guard);
  return {
    publicPreflight,
    guards,
    decide(method, key, from, preflight) {
      const index = firstMatch(rules, method, key, from);
      // a deny rule wins even over a preflight: a browser's preflight never reaches a denied path
      if (index !== NO_RULE && guards[index]!.deny) return index;
      return publicPreflight && preflight ? PUBLIC_PREFLIGHT : index;
    },
  };
}

/**
 * The guard that {@link CompiledRules.decide}'s answer `decided` stands for: the rule's, the
 * public guard for a public preflight, undefined for {@link NO_RULE}.
 */
export function guardOfDecision(rules: CompiledRules, decided: number): RuleGuard | undefined {
  return decided >= 0 ? rules.guards[decided] : decided === PUBLIC_PREFLIGHT ? PUBLIC_GUARD : undefined;
}

/** The index of the first of `rules` matching `method` and `key[from…]`, or {@link NO_RULE}. */
function firstMatch(rules: readonly CompiledRule[], method: string, key: string, from: number): number {
  const upper = method.toUpperCase();
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index]!;
    if (rule.methods !== undefined && !rule.methods.has(upper)) continue;
    for (const pattern of rule.patterns) if (matchesPattern(key, from, pattern)) return index;
  }
  return NO_RULE;
}

function compileRule(rule: ServiceRule): CompiledRule {
  // The routing key lowercases letters; a valid rule path holds only unreserved characters and `*`.
  const patterns = rule.paths.map((path) => (path === '/' ? [] : path.slice(1).toLowerCase().split('/')));
  // RFC 9110 §9.3.2: HEAD is GET without the content, so a rule about GET is about HEAD too.
  const methods = rule.methods === undefined ? undefined : new Set(rule.methods.includes('GET') ? [...rule.methods, 'HEAD'] : rule.methods);
  return { patterns, methods, guard: guardOf(rule) };
}

function guardOf(rule: ServiceRule): RuleGuard {
  if (rule.action === 'public') return PUBLIC_GUARD;
  if (rule.action === 'deny') return DENY_GUARD;
  return { deny: false, signIn: true, policy: compileAccessPolicy(rule.access), maxAge: rule.maxAge, acr: rule.acr };
}

/**
 * True when the key from `from` starts with the pattern's segments on whole segments: `/hooks/*`
 * matches `/hooks/a` and `/hooks/a/b`, not `/hooks` nor `/hooksx/a`; `*` never matches the empty
 * segment after a trailing `/`.
 */
function matchesPattern(key: string, from: number, pattern: readonly string[]): boolean {
  let at = from;
  for (const segment of pattern) {
    if (key.charCodeAt(at) !== SLASH) return false;
    let end = key.indexOf('/', at + 1);
    if (end === -1) end = key.length;
    const length = end - at - 1;
    if (segment === '*' ? length === 0 : length !== segment.length || !key.startsWith(segment, at + 1)) return false;
    at = end;
  }
  return at === key.length || key.charCodeAt(at) === SLASH;
}
