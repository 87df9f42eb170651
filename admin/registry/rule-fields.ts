import * as v from 'valibot';
import type { AccessPolicy, ServiceRule } from '../../shared/types.js';
import { atMostChars } from '../http/char-length.js';
import { accessSchema } from './access-policy-fields.js';
import { got, isObject, MAX_PATH_LENGTH } from './service-fields.js';
import { acrSchema, maxAgeSchema } from './step-up-fields.js';

/**
 * The rules of a service's `rules` and `corsPreflight` (design.md §4.18, limits in §5): valibot
 * schemas for the bodies' schemas (service-validation.ts). Each message names the rule's field
 * it is about (`paths`, `methods`, `action`, `access`, `maxAge`, `acr`), since a list's entries are
 * reported on the list (`rules`).
 */

/** Most rules of one service (design.md §5). */
export const MAX_RULES = 64;
/** Most paths of one rule, and most methods. */
export const MAX_RULE_PATHS = 32;
export const MAX_RULE_METHODS = 16;

/** A segment of a rule's path: a service path's segment, or `*` (any one segment). */
const RULE_SEGMENT = /^([A-Za-z0-9._~-]+|\*)$/;
/** An HTTP method as a rule names it: a token (RFC 9110 §5.6.2) in capitals, at most 32 characters. */
const METHOD = /^[A-Z0-9!#$%&'*+.^_`|~-]{1,32}$/;

const segmentsOf = (path: string): string[] => (path === '/' ? [] : path.slice(1).split('/'));

/** One of a rule's `paths`: a path within the service, as a service path is written, `*` segments allowed. */
const rulePath = v.pipe(
  v.string((issue) => `paths must contain only strings ${got(issue)}`),
  ...atMostChars(MAX_PATH_LENGTH, `paths must be at most ${MAX_PATH_LENGTH} characters each`),
  v.check((path) => path.startsWith('/'), (issue) => `paths must start with / ${got(issue)}`),
  v.check((path) => path === '/' || !path.endsWith('/'), (issue) => `paths must not end with / ${got(issue)}`),
  v.check((path) => !segmentsOf(path).includes(''), (issue) => `paths must not contain an empty segment (//) ${got(issue)}`),
  v.check((path) => segmentsOf(path).every((s) => s !== '.' && s !== '..'), (issue) => `paths must not contain a . or .. segment ${got(issue)}`),
  v.check((path) => segmentsOf(path).every((s) => RULE_SEGMENT.test(s)), (issue) => `paths segments may only contain A-Z a-z 0-9 . _ ~ -, or be * ${got(issue)}`),
);

const ruleMethod = v.pipe(
  v.string((issue) => `methods must contain only strings ${got(issue)}`),
  v.check((method) => METHOD.test(method), (issue) => `methods must be HTTP methods in capitals, such as GET ${got(issue)}`),
);

/** Why a rule's object has a key it may not have, or lacks one it needs. */
function ruleKeyMessage(issue: v.BaseIssue<unknown>): string {
  const key = String(issue.input ?? issue.expected ?? '');
  if (issue.expected !== 'never') return `each rule needs paths and action (a rule lacks ${issue.expected})`;
  return `a rule has an unknown field ${JSON.stringify(key)}`;
}

/** One rule: `{ paths, methods?, action, access?, maxAge?, acr? }`, the last three only with `require`. */
const ruleSchema = v.pipe(
  v.custom<object>(isObject, 'must contain only objects ({ paths, methods?, action, access?, maxAge?, acr? })'),
  v.strictObject(
    {
      paths: v.pipe(
        v.array(rulePath, 'paths must be a list of paths'),
        v.minLength(1, 'paths must not be empty'),
        v.maxLength(MAX_RULE_PATHS, `paths must have at most ${MAX_RULE_PATHS} entries`),
        v.description('Paths within the service: whole segments, * for any one segment; each kept once'),
        v.transform((paths): string[] => [...new Set(paths)]),
      ),
      methods: v.optional(
        v.pipe(
          v.array(ruleMethod, 'methods must be a list of HTTP methods'),
          v.minLength(1, 'methods must not be empty (leave it out for every method)'),
          v.maxLength(MAX_RULE_METHODS, `methods must have at most ${MAX_RULE_METHODS} entries`),
          v.description('HTTP methods in capitals (GET covers HEAD); absent: every method'),
          v.transform((methods): string[] => [...new Set(methods)]),
        ),
      ),
      action: v.picklist(['public', 'deny', 'require'], (issue) => `action must be public, deny or require ${got(issue)}`),
      access: v.optional(accessSchema),
      maxAge: v.optional(maxAgeSchema('maxAge ')),
      acr: v.optional(acrSchema('acr ')),
    },
    ruleKeyMessage,
  ),
  v.check((rule) => rule.access === undefined || rule.action === 'require', 'access is only for a rule whose action is require'),
  v.check((rule) => rule.maxAge === undefined || rule.action === 'require', 'maxAge is only for a rule whose action is require'),
  v.check((rule) => rule.acr === undefined || rule.action === 'require', 'acr is only for a rule whose action is require'),
  v.transform(normalRule),
);

/** What {@link normalRule} reads: a rule as its schema checked it. */
interface CheckedRule {
  paths: string[];
  methods?: string[] | undefined;
  action: ServiceRule['action'];
  access?: AccessPolicy | null | undefined;
  maxAge?: number | undefined;
  acr?: string[] | undefined;
}

/**
 * A rule as stored and answered: `methods` only when given, `access` (null for none) only with
 * `require`, and `maxAge` and `acr` (step-up) only when given.
 */
function normalRule(rule: CheckedRule): ServiceRule {
  const { paths, methods, action, maxAge, acr } = rule;
  return {
    paths,
    ...(methods === undefined ? {} : { methods }),
    action,
    ...(action === 'require' ? { access: rule.access ?? null } : {}),
    ...(maxAge === undefined ? {} : { maxAge }),
    ...(acr === undefined ? {} : { acr }),
  };
}

/** `rules` (design.md §4.18): 0 to 64 rules, in order; the first that matches a request decides. */
export const rulesSchema = v.pipe(
  v.array(ruleSchema, 'must be a list of rules'),
  v.maxLength(MAX_RULES, `must have at most ${MAX_RULES} rules`),
  v.description(
    'Rules inside the service, the first matching one deciding: public (no sign-in), deny (403), or require (sign-in and its own access policy); ' +
      'a request none matches follows requireAuth, access, maxAge and acr. A require rule may ask step-up (maxAge, acr) instead of the service. Paths are matched on the routing key, as service paths are',
  ),
);

/** `corsPreflight` (design.md §4.18): `public` lets CORS preflights through without sign-in. */
export const corsPreflightSchema = v.pipe(
  v.picklist(['auth', 'public'], (issue) => `must be auth or public ${got(issue)}`),
  v.description('public: OPTIONS requests with Origin and Access-Control-Request-Method and no body pass without sign-in, for the target to answer; auth: as any request'),
);

/** The rules' fields as a create body and a registry document's entry take them: defaults filled in. */
export const ruleEntries = {
  rules: v.optional(rulesSchema, () => []),
  corsPreflight: v.optional(corsPreflightSchema, 'auth'),
};

/** The rules' fields as a PUT body takes them: each optional, no default. */
export const rulePatchEntries = {
  rules: v.optional(rulesSchema),
  corsPreflight: v.optional(corsPreflightSchema),
};
