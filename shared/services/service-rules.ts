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
  readonly patterns: readonly Pattern[];
  /** Undefined: every method. */
  readonly methods: ReadonlySet<string> | undefined;
  readonly guard: RuleGuard;
}

type Pattern = readonly string[];

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
  const segments = new KeySegments(Math.max(0, ...rules.flatMap((rule) => rule.patterns.map((pattern) => pattern.length))));
  return {
    publicPreflight,
    guards,
    decide(method, key, from, preflight) {
      const index = firstMatch(rules, method, segments.read(key, from));
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

/** The index of the first of `rules` matching `method` and the path `segments` holds, or {@link NO_RULE}. */
function firstMatch(rules: readonly CompiledRule[], method: string, segments: KeySegments): number {
  let upper: string | undefined;
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index]!;
    if (rule.methods !== undefined && !rule.methods.has((upper ??= method.toUpperCase()))) continue;
    const { patterns } = rule;
    for (let p = 0; p < patterns.length; p++) if (segments.startWith(patterns[p]!)) return index;
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
 * A routing key's first segments after a service's prefix, found once per decision so that each
 * pattern compares lengths and characters only. One per compiled rule set, reused: a decision is
 * synchronous.
 */
class KeySegments {
  /** `bounds[i]` is the `/` before segment `i`; `bounds[count]` the end of the last one read. */
  readonly #bounds: Int32Array;
  #key = '';
  #count = 0;

  /** `depth`: the most segments any pattern has. */
  constructor(depth: number) {
    this.#bounds = new Int32Array(depth + 1);
  }

  /** Reads up to `depth` segments of `key[from…]` (`''` or `/…`, routing-key.ts). */
  read(key: string, from: number): this {
    const bounds = this.#bounds;
    let count = 0;
    let at = from;
    bounds[0] = at;
    while (count < bounds.length - 1 && at < key.length) {
      const end = key.indexOf('/', at + 1);
      at = end === -1 ? key.length : end;
      bounds[++count] = at;
    }
    this.#key = key;
    this.#count = count;
    return this;
  }

  /**
   * True when the path starts with `pattern`'s segments on whole segments: `/hooks/*` matches
   * `/hooks/a` and `/hooks/a/b`, not `/hooks` nor `/hooksx/a`; `*` never matches the empty segment
   * after a trailing `/`.
   */
  startWith(pattern: Pattern): boolean {
    if (pattern.length > this.#count) return false;
    const bounds = this.#bounds;
    const key = this.#key;
    for (let i = 0; i < pattern.length; i++) {
      const segment = pattern[i]!;
      const start = bounds[i]! + 1;
      const length = bounds[i + 1]! - start;
      if (segment === '*') {
        if (length === 0) return false;
        continue;
      }
      if (length !== segment.length) return false;
      for (let c = 0; c < length; c++) if (key.charCodeAt(start + c) !== segment.charCodeAt(c)) return false;
    }
    return true;
  }
}
