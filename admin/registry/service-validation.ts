import * as v from 'valibot';
import { GatewayError } from '../../shared/errors.js';
import { GATEWAY_PREFIXES, isGatewayPath } from '../../shared/http/gateway-paths.js';
import { DEFAULT_HEALTH_CHECK, DEFAULT_LOAD_BALANCING, DEFAULT_OUTLIER_DETECTION, DEFAULT_RETRIES, DEFAULT_WEIGHT } from '../../shared/services/target-pool-settings.js';
import type { AccessPolicy, HealthCheck, LoadBalancing, OutlierDetection, ServiceTarget } from '../../shared/types.js';
import { STATUS_CLASSES } from '../access-log/traffic-rollups.js';
import { atMostChars } from '../http/char-length.js';
import { parseWith, requireObject, validationError } from '../http/json-body-validation.js';

/**
 * Validation of the admin API's service bodies (interface.md §4.2, design.md §5). Pure functions: they read
 * an already-parsed JSON value and either return a typed value or throw a {@link GatewayError}.
 */

/** Longest `path`, in characters (design.md §5). */
export const MAX_PATH_LENGTH = 200;
/** Longest `targetUrl`, in characters (design.md §5). */
export const MAX_TARGET_URL_LENGTH = 2048;
/** Longest `name` after trimming, in characters (design.md §5). */
export const MAX_NAME_LENGTH = 100;
/** Longest `description`, in characters (design.md §5). */
export const MAX_DESCRIPTION_LENGTH = 1000;
/** Most entries in one list of an access policy (design.md §5). */
export const MAX_POLICY_ENTRIES = 1000;
/** Longest entry of an access policy's lists, after trimming, in characters (design.md §5). */
export const MAX_POLICY_ENTRY_LENGTH = 320;
/** Most targets of one service (issue 23). */
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

const REQUIRED_ON_CREATE = ['name', 'path', 'targetUrl'] as const;
/** Fields a PUT body may carry but that are set by the service; ignored, not errors (design.md §5). */
export const READ_ONLY = ['id', 'createdAt', 'updatedAt'] as const;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** An email address as a policy lists it: one `@` between a local part and a domain, no whitespace. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** A domain as a policy lists it: dot-separated labels, none empty, no `@` or whitespace. */
const DOMAIN = /^[^\s@.]+(\.[^\s@.]+)*$/;
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/** The segments after the leading `/`; none for `/` itself. */
const segmentsOf = (path: string): string[] => (path === '/' ? [] : path.slice(1).split('/'));

/** The entry a reason is about, quoted for the message. */
const got = (issue: { input: unknown }): string => `(got ${JSON.stringify(issue.input)})`;

/** `http://host…` or `https://host…` in the plain form (no backslashes) that parses as a URL. */
function isAbsoluteHttpUrl(text: string): boolean {
  if (!/^https?:\/\/[^/?#]/i.test(text) || text.includes('\\')) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** The authority (`user@host:port`) of an absolute URL, as written. */
const authorityOf = (url: string): string => url.replace(/^[a-z]+:\/\//i, '').split(/[/?#]/)[0] ?? '';

const nameSchema = v.pipe(
  v.string('must be a string'),
  v.description(`1 to ${MAX_NAME_LENGTH} characters after trimming`),
  v.trim(),
  v.check((name) => name.length > 0, 'must not be empty'),
  ...atMostChars(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
);

const pathSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.description(
    `The public path prefix: / or /segment/…, segments of A-Z a-z 0-9 . _ ~ -, no empty, . or .. segment, no trailing /; ` +
      `unique ignoring case (409 Path already in use); not at or under ${GATEWAY_PREFIXES.join(', ')}`,
  ),
  v.startsWith('/', 'must start with /'),
  v.check((path) => path === '/' || !path.endsWith('/'), 'must not end with /'),
  v.check((path) => !segmentsOf(path).includes(''), 'must not contain an empty segment (//)'),
  v.check((path) => segmentsOf(path).every((s) => s !== '.' && s !== '..'), 'must not contain a . or .. segment'),
  v.check((path) => segmentsOf(path).every((s) => SEGMENT.test(s)), 'segments may only contain A-Z a-z 0-9 . _ ~ -'),
  // Only unreserved characters and no empty segments by now, so the routing key is the lowercase form.
  v.check((path) => !isGatewayPath(path.toLowerCase()), `must not be or sit under a gateway path (${GATEWAY_PREFIXES.join(', ')})`),
);

const TARGET_URL_RULES = 'An absolute http: or https: URL with a host, without user info, query or fragment; may carry a base path';

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
    v.check(isAbsoluteHttpUrl, reason('must be an absolute http: or https: URL with a host')),
    v.check((url) => !authorityOf(url).includes('@'), reason('must not contain user info')),
    v.check((url) => !url.includes('?'), reason('must not contain a query')),
    v.check((url) => !url.includes('#'), reason('must not contain a fragment')),
  );
}

const targetUrlSchema = targetUrlRules(false);

const descriptionSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`),
);

const booleanSchema = v.boolean('must be a boolean');

/** One entry of an access policy's list: a string, trimmed, not empty, not too long. */
const policyEntry = v.pipe(
  v.string('must contain only strings'),
  v.description(`1 to ${MAX_POLICY_ENTRY_LENGTH} characters after trimming`),
  v.trim(),
  v.check((entry) => entry.length > 0, 'must not contain an empty entry'),
  ...atMostChars(MAX_POLICY_ENTRY_LENGTH, `entries must be at most ${MAX_POLICY_ENTRY_LENGTH} characters`),
);

/** Emails are matched case-insensitively (design.md §4.7), so they are kept lowercased. */
const emailEntry = v.pipe(
  policyEntry,
  v.description('An email address: one @, no whitespace; kept lowercased'),
  v.check((entry) => EMAIL.test(entry), (issue) => `must be an email address ${got(issue)}`),
  v.toLowerCase(),
);

/** A domain matches the part after an email's last `@`, case-insensitively (design.md §4.7). */
const domainEntry = v.pipe(
  policyEntry,
  v.description('A domain such as example.com, without @; kept lowercased'),
  v.check((entry) => !entry.includes('@'), (issue) => `must be a domain without @ ${got(issue)}`),
  v.check((entry) => DOMAIN.test(entry), (issue) => `must be a domain such as example.com ${got(issue)}`),
  v.toLowerCase(),
);

/** A list of a policy: an array of `entry`, each kept once, in the order first given. */
const policyList = <T extends v.GenericSchema<unknown, string>>(entry: T) =>
  v.optional(
    v.pipe(
      v.array(entry, 'must be a list of strings'),
      v.maxLength(MAX_POLICY_ENTRIES, `must have at most ${MAX_POLICY_ENTRIES} entries`),
      v.description('Each entry kept once, in the order first given'),
      v.transform((list): string[] => [...new Set(list)]),
    ),
    [],
  );

/**
 * `access` (design.md §4.7): null, or an object of up to four lists (unknown keys refused);
 * groups and subjects kept as written (trimmed), emails and domains lowercased. A policy whose
 * lists are all empty is no policy: null.
 */
const accessSchema = v.pipe(
  v.nullable(
    v.pipe(
      v.custom<object>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), 'must be an object or null'),
      v.strictObject({ groups: policyList(policyEntry), emails: policyList(emailEntry), emailDomains: policyList(domainEntry), subjects: policyList(policyEntry) }),
    ),
  ),
  v.description(
    'Who may use the service once signed in: a caller matching any entry (a group, a verified email or its domain, ' +
      'a subject); null, or all lists empty: any signed-in caller. Needs requireAuth: true',
  ),
  v.transform((policy): AccessPolicy | null => (policy && Object.values(policy).some((list) => list.length > 0) ? policy : null)),
);

/** A JSON object (not an array or null), as the guard before a strict object that says so in its own words. */
const isObject = (input: unknown): boolean => typeof input === 'object' && input !== null && !Array.isArray(input);

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

/** `targets` (issue 23): 1–64 targets, no url twice; the first is `targetUrl`. */
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
 * `healthCheck` (issue 23): null (no active checks), or an object whose absent fields take
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

/** `outlierDetection` (issue 23): an object whose absent fields take the defaults (3, 10, 30), unknown keys refused. */
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

/** The pool's fields besides `targets`, as a create body and a registry document's entry take them: defaults filled in. */
const poolEntries = {
  loadBalancing: v.optional(loadBalancingSchema, DEFAULT_LOAD_BALANCING),
  healthCheck: v.optional(healthCheckSchema, null),
  outlierDetection: v.optional(outlierDetectionSchema, () => ({ ...DEFAULT_OUTLIER_DETECTION })),
  retries: v.optional(retriesSchema, DEFAULT_RETRIES),
};

/** `targetUrl`, `targets` or both (they must agree: {@link poolOf}); a whole service needs one of them. */
const targetEntries = {
  targetUrl: v.optional(
    v.pipe(
      targetUrlSchema,
      v.description(`${TARGET_URL_RULES}. The first target's url: alone, the one target (weight 1); with targets, their first url. A service needs targetUrl or targets`),
    ),
  ),
  targets: v.optional(targetsSchema),
};

const createSchema = v.object({
  name: nameSchema,
  path: pathSchema,
  ...targetEntries,
  requireAuth: v.optional(booleanSchema, true),
  description: v.optional(descriptionSchema, ''),
  access: v.optional(accessSchema, null),
  forwardAuthorization: v.optional(booleanSchema, false),
  ...poolEntries,
});

const updateSchema = v.object({
  name: v.optional(nameSchema),
  path: v.optional(pathSchema),
  ...targetEntries,
  requireAuth: v.optional(booleanSchema),
  description: v.optional(descriptionSchema),
  enabled: v.optional(booleanSchema),
  access: v.optional(accessSchema),
  forwardAuthorization: v.optional(booleanSchema),
  loadBalancing: v.optional(loadBalancingSchema),
  healthCheck: v.optional(healthCheckSchema),
  outlierDetection: v.optional(outlierDetectionSchema),
  retries: v.optional(retriesSchema),
});

/**
 * A service as a registry document declares it (design.md §4.9): the create body's fields with
 * the same defaults, and `enabled` (default true); the entry's `id` is ignored.
 */
const entrySchema = v.object({ ...createSchema.entries, enabled: v.optional(booleanSchema, true) });

const toggleSchema = v.object({ enabled: booleanSchema });

/**
 * The bodies' schemas, for the API's description (admin/openapi/), which converts their structure to
 * JSON Schema; what `v.check` and the transforms add is said in words there.
 */
export const SERVICE_BODY_SCHEMAS = { create: createSchema, update: updateSchema, toggle: toggleSchema };

/** A service's targets as a whole service has them: `targetUrl` is the first target's url. */
type Targets = { targetUrl: string; targets: ServiceTarget[] };
/** What a schema of a whole service gives, its `targetUrl` and `targets` made one ({@link poolOf}). */
type Whole<S extends v.GenericSchema> = Omit<v.InferOutput<S>, keyof Targets> & Targets;

/**
 * A validated create body: `name` trimmed, `requireAuth` defaulted to true, `description` to '',
 * `access` normalised (null when none), `forwardAuthorization` defaulted to false; `targetUrl` and
 * `targets` both present ({@link poolOf}), `loadBalancing`, `healthCheck`, `outlierDetection`
 * (each of its fields) and `retries` defaulted (shared/target-pool-settings.ts).
 */
export type ServiceCreateInput = Whole<typeof createSchema>;
/**
 * A validated PUT body: only the fields present, each valid (`access` normalised, a health check's
 * and outlier detection's absent fields defaulted); read-only fields dropped. `targetUrl` and
 * `targets` are both present or both absent ({@link poolOf}).
 */
export type ServicePatch = v.InferOutput<typeof updateSchema>;
/** A validated registry document entry: every writable field of a service, defaults filled in. */
export type ServiceEntryInput = Whole<typeof entrySchema>;
/** A validated toggle body (interface.md §4.2 PATCH /api/services/:id/toggle). */
export type ToggleInput = v.InferOutput<typeof toggleSchema>;

/**
 * Validates a POST /api/services body (interface.md §4.2, design.md §5).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object` for arrays, null and primitives;
 *   MISSING_FIELDS (exact spec message, `fields` naming what is absent) when `name` or `path` is
 *   absent or null, or `targetUrl` is and `targets` too; BAD_REQUEST with `fields` for every
 *   invalid or unknown field, and with `fields.targetUrl` when it is not the first target's url.
 */
export function parseServiceCreate(body: unknown): ServiceCreateInput {
  return parseWhole(createSchema, body, []);
}

/**
 * Validates one service of a registry document (design.md §4.9) by the create body's rules, with
 * `enabled` besides; `id` is ignored (a document's services are matched by path).
 * @throws {GatewayError} as {@link parseServiceCreate}.
 */
export function parseServiceEntry(entry: unknown): ServiceEntryInput {
  return parseWhole(entrySchema, entry, ['id']);
}

/**
 * A whole service (a create body, a document entry): `name`, `path` and `targetUrl` or `targets`
 * present, every field valid, `targetUrl` and `targets` agreeing, a policy only with `requireAuth`.
 */
function parseWhole<S extends typeof createSchema | typeof entrySchema>(schema: S, body: unknown, ignored: readonly string[]): Whole<S> {
  const object = requireObject(body);
  const given = (field: string) => object[field] !== undefined && object[field] !== null;
  const missing = REQUIRED_ON_CREATE.filter((field) => !given(field) && !(field === 'targetUrl' && given('targets')));
  if (missing.length > 0) {
    throw new GatewayError('MISSING_FIELDS', { fields: Object.fromEntries(missing.map((f) => [f, 'is required'])) });
  }
  const input = parseWith(schema, object, 'Invalid service', ignored);
  assertPolicyNeedsSignIn(input);
  return withPool(input) as Whole<S>;
}

/**
 * `body` (a validated create body, entry or PUT body) with its `targetUrl` and `targets` made one
 * ({@link poolOf}), placed after `name` and `path` as a service has them (a PUT's absent `name`
 * and `path` are undefined then).
 */
function withPool<T extends { name?: string; path?: string; targetUrl?: string; targets?: ServiceTarget[] }>(body: T) {
  const { name, path, targetUrl, targets, ...rest } = body;
  return { name, path, ...poolOf(targetUrl, targets), ...rest };
}

/**
 * `targetUrl` and `targets` made one (issue 23): a lone `targetUrl` is the pool of that one target
 * (weight 1), a lone `targets` gives `targetUrl` its first url, both must agree so; neither: undefined.
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

/**
 * Validates a PUT /api/services/:id body: any subset of the writable fields, `enabled` included
 * (design.md §5). `id`, `createdAt` and `updatedAt` are ignored; an empty object is a valid no-op.
 * A lone `targetUrl` replaces the pool with that one target, lone `targets` set `targetUrl` to
 * their first url ({@link poolOf}).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` for every
 *   invalid or unknown field, or with `fields.targetUrl` when it is not the first target's url.
 */
export function parseServiceUpdate(body: unknown): ServicePatch {
  const patch = withPool(parseWith(updateSchema, requireObject(body), 'Invalid service', READ_ONLY));
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as ServicePatch;
}

/**
 * A service's access policy applies to signed-in callers, so it needs `requireAuth: true`
 * (design.md §4.7). Checked on the service a create or update would leave, so a PUT that turns
 * `requireAuth` off while a policy stays is refused too.
 * @throws {GatewayError} BAD_REQUEST with `fields.access` `needs requireAuth`.
 */
export function assertPolicyNeedsSignIn(service: { requireAuth: boolean; access?: AccessPolicy | null }): void {
  if (service.access && !service.requireAuth) throw validationError('Invalid service', { access: 'needs requireAuth' }, []);
}

/**
 * Validates a PATCH /api/services/:id/toggle body, `{ "enabled": <boolean> }` (interface.md §4.2).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` when `enabled`
 *   is missing or not a boolean, or another field is present.
 */
export function parseToggle(body: unknown): ToggleInput {
  return parseWith(toggleSchema, requireObject(body), 'Invalid toggle body', []);
}
