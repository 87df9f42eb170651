import * as v from 'valibot';
import { STATUS_CLASSES } from '../../shared/http/status-classes.js';
import { DEFAULT_HEALTH_CHECK, DEFAULT_LOAD_BALANCING, DEFAULT_OUTLIER_DETECTION, DEFAULT_RETRIES, DEFAULT_WEIGHT } from '../../shared/services/target-pool-settings.js';
import type { HealthCheck, LoadBalancing, OutlierDetection, ServiceTarget } from '../../shared/types.js';
import { atMostChars } from '../http/char-length.js';
import { validationError } from '../http/json-body-validation.js';
import { got, isObject, MAX_PATH_LENGTH } from './service-fields.js';

/**
 * The rules of a service's pool of targets (design.md §4.13, limits in §5): `targetUrl` and
 * `targets`, which must agree, and `loadBalancing`, `healthCheck`, `outlierDetection`, `retries`.
 * Valibot schemas for the bodies' schemas (service-validation.ts), and {@link withPool}, which
 * makes `targetUrl` and `targets` one.
 */

/** Longest `targetUrl`, and a target's url, in characters (design.md §5). */
export const MAX_TARGET_URL_LENGTH = 2048;
/** Most targets of one service (design.md §4.13). */
export const MAX_TARGETS = 64;
/** Largest weight of a target; the smallest is 1. */
export const MAX_WEIGHT = 100;
/** Most retries of a request on another target; the fewest is 0. */
export const MAX_RETRIES = 5;
/** How a service may balance its requests (shared/types.ts `LoadBalancing`), the default first. */
export const LOAD_BALANCING_METHODS = [DEFAULT_LOAD_BALANCING, 'least_requests', 'client_ip', 'cookie'] as const satisfies readonly LoadBalancing[];
/** The inclusive range of each number of an active health check (`healthCheck`). */
export const HEALTH_CHECK_RANGES: Readonly<Record<Exclude<keyof HealthCheck, 'path' | 'expectStatus'>, readonly [number, number]>> = {
  intervalSeconds: [1, 300],
  timeoutMs: [100, 60_000],
  healthyThreshold: [1, 10],
  unhealthyThreshold: [1, 10],
};
/** The inclusive range of each number of outlier detection (`outlierDetection`). */
export const OUTLIER_DETECTION_RANGES: Readonly<Record<keyof OutlierDetection, readonly [number, number]>> = {
  maxFails: [1, 100],
  windowSeconds: [1, 3600],
  ejectSeconds: [1, 3600],
};

const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/**
 * `http://host…`, `https://host…` or `h2c://host…` (cleartext HTTP/2 with prior knowledge, for gRPC
 * targets: design.md §4.13) in the plain form (no backslashes) that parses as a URL.
 */
function isAbsoluteTargetUrl(text: string): boolean {
  if (!/^(?:https?|h2c):\/\/[^/?#]/i.test(text) || text.includes('\\')) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** The authority (`user@host:port`) of an absolute URL, as written. */
const authorityOf = (url: string): string => url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/)[0] ?? '';

const TARGET_URL_RULES = 'An absolute http:, https: or h2c: (cleartext HTTP/2, for gRPC) URL with a host, without user info, query or fragment; may carry a base path';

/**
 * The rules of a target's URL (design.md §5). `targetUrl` gives a broken rule's reason as it is; a
 * url in `targets`, whose reasons are reported on the list, names the url and quotes it
 * (`url must not contain a query (got "http://a/?x")`).
 */
function targetUrlRules(inList: boolean) {
  const reason = (why: string) => (inList ? (issue: v.BaseIssue<unknown>) => `url ${why} ${got(issue)}` : why);
  return v.pipe(
    v.string(reason('must be a string')),
    ...atMostChars(MAX_TARGET_URL_LENGTH, `${inList ? 'url ' : ''}must be at most ${MAX_TARGET_URL_LENGTH} characters`),
    v.description(TARGET_URL_RULES),
    v.check((url) => !WHITESPACE_OR_CONTROL.test(url), reason('must not contain whitespace or control characters')),
    v.check(isAbsoluteTargetUrl, reason('must be an absolute http:, https: or h2c: URL with a host')),
    v.check((url) => !authorityOf(url).includes('@'), reason('must not contain user info')),
    v.check((url) => !url.includes('?'), reason('must not contain a query')),
    v.check((url) => !url.includes('#'), reason('must not contain a fragment')),
  );
}

type Reason = string | ((issue: v.BaseIssue<unknown>) => string);

/** An integer from `min` to `max`; anything else fails with `reason` (by default, that it must be one). */
const integerIn = (min: number, max: number, reason: Reason = `must be an integer from ${min} to ${max}`) =>
  v.pipe(v.number(reason), v.integer(reason), v.minValue(min, reason), v.maxValue(max, reason));

/** A field of an integer in `range`, described by `description`; absent: `fallback`. */
const integerField = ([min, max]: readonly [number, number], fallback: number, description: string) =>
  v.optional(v.pipe(integerIn(min, max), v.description(description)), fallback);

/** The first url listed twice in `targets`, compared as URLs (`http://A:80` is `http://a/`), or undefined. */
function repeatedUrl(targets: readonly ServiceTarget[]): string | undefined {
  const seen = new Set<string>();
  for (const { url } of targets) {
    const href = new URL(url).href;
    if (seen.has(href)) return url;
    seen.add(href);
  }
  return undefined;
}

/**
 * A target of the pool: `url` by `targetUrl`'s rules, `weight` an integer 1–100 (default 1), no
 * other key. Its reasons are reported on `targets`, so each names the key and quotes the value.
 */
const targetSchema = v.strictObject(
  {
    url: targetUrlRules(true),
    weight: v.optional(integerIn(1, MAX_WEIGHT, (issue) => `weight must be an integer from 1 to ${MAX_WEIGHT} ${got(issue)}`), DEFAULT_WEIGHT),
  },
  (issue) =>
    issue.expected === 'never'
      ? `may only have url and weight ${got(issue)}`
      : issue.input === undefined
        ? 'each need a url'
        : `must contain only objects { url, weight } ${got(issue)}`,
);

const TARGET_COUNT = `must have 1 to ${MAX_TARGETS} targets`;

/** `targets` (design.md §4.13): 1–64 targets, no url twice; the first is `targetUrl`. */
const targetsSchema = v.pipe(
  v.array(targetSchema, 'must be a list of targets { url, weight }'),
  v.minLength(1, TARGET_COUNT),
  v.maxLength(MAX_TARGETS, TARGET_COUNT),
  v.description(
    `The pool: 1 to ${MAX_TARGETS} targets, each a url (targetUrl's rules) and a weight, an integer 1 to ${MAX_WEIGHT} (default ${DEFAULT_WEIGHT}), ` +
      'its relative share of requests; no url twice. The first is targetUrl',
  ),
  v.check((targets) => repeatedUrl(targets) === undefined, (issue) => `must not list a url twice (got ${JSON.stringify(repeatedUrl(issue.input as ServiceTarget[]))})`),
);

const loadBalancingSchema = v.pipe(
  v.picklist(LOAD_BALANCING_METHODS, `must be one of ${LOAD_BALANCING_METHODS.join(', ')}`),
  v.description(
    'round_robin: weighted, smooth; least_requests: the less busy of two targets picked at random; ' +
      "client_ip: consistent hashing of the client's address; cookie: a signed sticky cookie scoped to the service's path",
  ),
);

/** A health check's path: relative to the target's base path, no query or fragment. */
const healthCheckPathSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.description(`Probed with GET, relative to each target's base path: starts with /, no whitespace, query or fragment, at most ${MAX_PATH_LENGTH} characters`),
  v.startsWith('/', 'must start with /'),
  v.check((path) => !WHITESPACE_OR_CONTROL.test(path), 'must not contain whitespace or control characters'),
  v.check((path) => !path.includes('?'), 'must not contain a query'),
  v.check((path) => !path.includes('#'), 'must not contain a fragment'),
);

const EXPECT_STATUS = `must be a status from 100 to 599 or a class from "${STATUS_CLASSES[0]}" to "${STATUS_CLASSES.at(-1)}"`;

/** What a passing probe answers: a status, or a class of them. */
const expectStatusSchema = v.pipe(
  v.union([integerIn(100, 599, EXPECT_STATUS), v.picklist(STATUS_CLASSES, EXPECT_STATUS)], EXPECT_STATUS),
  v.description('A status (200) or a class ("2xx")'),
);

/**
 * `healthCheck` (design.md §4.13): null (no active checks), or an object whose absent fields take
 * DEFAULT_HEALTH_CHECK's values, unknown keys refused, `timeoutMs` below the interval.
 */
const healthCheckSchema = v.pipe(
  v.nullable(
    v.pipe(
      v.custom<object>(isObject, 'must be an object or null'),
      v.strictObject({
        path: v.optional(healthCheckPathSchema, DEFAULT_HEALTH_CHECK.path),
        intervalSeconds: integerField(HEALTH_CHECK_RANGES.intervalSeconds, DEFAULT_HEALTH_CHECK.intervalSeconds, 'Seconds between probes of one target'),
        timeoutMs: integerField(HEALTH_CHECK_RANGES.timeoutMs, DEFAULT_HEALTH_CHECK.timeoutMs, "Milliseconds to wait for a probe's answer; below intervalSeconds × 1000"),
        healthyThreshold: integerField(HEALTH_CHECK_RANGES.healthyThreshold, DEFAULT_HEALTH_CHECK.healthyThreshold, 'Passing probes in a row that make a target healthy'),
        unhealthyThreshold: integerField(HEALTH_CHECK_RANGES.unhealthyThreshold, DEFAULT_HEALTH_CHECK.unhealthyThreshold, 'Failing probes in a row that make a target unhealthy'),
        expectStatus: v.optional(expectStatusSchema, DEFAULT_HEALTH_CHECK.expectStatus as v.InferOutput<typeof expectStatusSchema>),
      }),
      v.check((check) => check.timeoutMs < check.intervalSeconds * 1000, 'timeoutMs must be below intervalSeconds × 1000'),
    ),
  ),
  v.description("Active checks: each proxy process probes each target with GET on its own; null: none. A passing probe ends a target's ejection"),
);

/** `outlierDetection` (design.md §4.13): an object whose absent fields take the defaults (3, 10, 30), unknown keys refused. */
const outlierDetectionSchema = v.pipe(
  v.custom<object>(isObject, 'must be an object'),
  v.strictObject({
    maxFails: integerField(OUTLIER_DETECTION_RANGES.maxFails, DEFAULT_OUTLIER_DETECTION.maxFails, 'Failures within the window that eject a target'),
    windowSeconds: integerField(OUTLIER_DETECTION_RANGES.windowSeconds, DEFAULT_OUTLIER_DETECTION.windowSeconds, 'Seconds in which maxFails failures eject a target'),
    ejectSeconds: integerField(OUTLIER_DETECTION_RANGES.ejectSeconds, DEFAULT_OUTLIER_DETECTION.ejectSeconds, "Seconds of a target's first ejection; doubled on each repeat, capped"),
  }),
  v.description(
    'Passive checks, always on: connection failures and 502, 503 and 504 answers of a target count; maxFails of them within windowSeconds eject it ' +
      'for ejectSeconds; the last target not ejected never is',
  ),
);

const retriesSchema = v.pipe(
  integerIn(0, MAX_RETRIES),
  v.description('Most retries on another target of a request that reached one (idempotent methods without a streamed body, on 502, 503, 504 or a reset)'),
);

/** `targetUrl`, `targets` or both (they must agree: {@link withPool}); a whole service needs one of them. */
export const targetEntries = {
  targetUrl: v.optional(
    v.pipe(
      targetUrlRules(false),
      v.description(`${TARGET_URL_RULES}. The first target's url: alone, the one target (weight 1); with targets, their first url. A service needs targetUrl or targets`),
    ),
  ),
  targets: v.optional(targetsSchema),
};

/** The pool's fields besides `targets`, as a create body and a registry document's entry take them: defaults filled in. */
export const poolEntries = {
  loadBalancing: v.optional(loadBalancingSchema, DEFAULT_LOAD_BALANCING),
  healthCheck: v.optional(healthCheckSchema, null),
  outlierDetection: v.optional(outlierDetectionSchema, () => ({ ...DEFAULT_OUTLIER_DETECTION })),
  retries: v.optional(retriesSchema, DEFAULT_RETRIES),
};

/** The pool's fields besides `targets`, as a PUT body takes them: each optional, no default. */
export const poolPatchEntries = {
  loadBalancing: v.optional(loadBalancingSchema),
  healthCheck: v.optional(healthCheckSchema),
  outlierDetection: v.optional(outlierDetectionSchema),
  retries: v.optional(retriesSchema),
};

/** A service's targets as a whole service has them: `targetUrl` is the first target's url. */
export type Targets = { targetUrl: string; targets: ServiceTarget[] };

/**
 * `body` (a validated create body, entry or PUT body) with its `targetUrl` and `targets` made one
 * ({@link poolOf}), placed after `name` and `path` as a service has them (a PUT's absent `name`
 * and `path` are undefined then).
 * @throws {GatewayError} BAD_REQUEST with `fields.targetUrl` when both are given and disagree.
 */
export function withPool<T extends { name?: string; path?: string; targetUrl?: string; targets?: ServiceTarget[] }>(body: T) {
  const { name, path, targetUrl, targets, ...rest } = body;
  return { name, path, ...poolOf(targetUrl, targets), ...rest };
}

/**
 * `targetUrl` and `targets` made one (design.md §4.13): a lone `targetUrl` is the pool of that one
 * target (weight 1), a lone `targets` gives `targetUrl` its first url, both must agree so; neither: undefined.
 * @throws {GatewayError} BAD_REQUEST with `fields.targetUrl` when both are given and disagree.
 */
function poolOf(targetUrl: string | undefined, targets: ServiceTarget[] | undefined): Targets | undefined {
  if (targets === undefined) return targetUrl === undefined ? undefined : { targetUrl, targets: [{ url: targetUrl, weight: DEFAULT_WEIGHT }] };
  const first = targets[0]!.url;
  if (targetUrl !== undefined && targetUrl !== first) {
    throw validationError('Invalid service', { targetUrl: `must be the first target's url (${JSON.stringify(first)})` }, []);
  }
  return { targetUrl: first, targets };
}
