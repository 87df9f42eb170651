import * as v from 'valibot';
import { AUDIT_ACTIONS } from '../audit-log.js';
import { HEALTH_CHECK_RANGES, LOAD_BALANCING_METHODS, MAX_RETRIES, MAX_TARGETS, MAX_WEIGHT, OUTLIER_DETECTION_RANGES } from '../registry/pool-fields.js';
import { TOKEN_SCOPES } from '../credentials/token-scope.js';
import { MAX_HOSTS } from '../registry/service-fields.js';
import { MAX_RULE_METHODS, MAX_RULE_PATHS, MAX_RULES } from '../registry/rule-fields.js';
import { MAX_ACR_VALUES, MAX_STEP_UP_AGE_S } from '../../shared/identity/step-up.js';
import { TRAFFIC_RANGES, type TrafficRange } from '../access-log/traffic-rollups.js';
import { STATUS_CLASSES, type StatusClass } from '../../shared/http/status-classes.js';
import { TARGET_STATES } from '../../shared/services/target-health-report.js';

/**
 * The admin API's answers as valibot schemas (interface.md §2, design.md §4.7, §4.8), for its OpenAPI
 * description only: nothing checks an answer against them at run time, the test of the description
 * (test/admin/openapi.test.ts) checks real answers against their conversion. Objects are strict, so
 * a field an answer gains fails that test until it is described here.
 */

const timestamp = v.pipe(v.string(), v.isoTimestamp(), v.description('ISO 8601, UTC'));
const uuid = v.pipe(v.string(), v.uuid());
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const rowId = v.pipe(v.number(), v.integer(), v.minValue(1));

/** A service's access policy (design.md §4.7): every list present, entries normalised. */
const accessPolicy = v.strictObject({
  groups: v.array(v.string()),
  emails: v.array(v.string()),
  emailDomains: v.array(v.string()),
  subjects: v.array(v.string()),
});

/** One rule inside a service (design.md §4.18): `methods` only when given, `access` only with `require`. */
/** Step-up sign-in's fields (design.md §4.18), of a service (nullable) and of a require rule (optional). */
const maxAge = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_STEP_UP_AGE_S));
const acrValues = v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(MAX_ACR_VALUES));

const serviceRule = v.strictObject({
  paths: v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(MAX_RULE_PATHS), v.description('Paths within the service: whole segments, * for any one segment')),
  methods: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(MAX_RULE_METHODS), v.description('HTTP methods (GET covers HEAD); absent: every method'))),
  action: v.picklist(['public', 'deny', 'require']),
  access: v.optional(v.pipe(v.nullable(accessPolicy), v.description('With require only: who may pass, instead of the service policy; null: any signed-in caller'))),
  maxAge: v.optional(v.pipe(maxAge, v.description("With require only: the sign-in's most age in seconds, instead of the service's (step-up); absent: any"))),
  acr: v.optional(v.pipe(acrValues, v.description("With require only: the accepted acr values, instead of the service's (step-up); absent: any"))),
});

/** An integer from `min` to `max`. */
const integerIn = ([min, max]: readonly [number, number]) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** One target of a service's pool (design.md §4.13). */
const serviceTarget = v.strictObject({
  url: v.string(),
  weight: v.pipe(integerIn([1, MAX_WEIGHT]), v.description('Relative share of requests')),
});

/** A service's active health checks (design.md §4.13), every field present. */
const healthCheck = v.strictObject({
  path: v.pipe(v.string(), v.description("Probed with GET, relative to each target's base path")),
  intervalSeconds: v.pipe(integerIn(HEALTH_CHECK_RANGES.intervalSeconds), v.description('Seconds between probes of one target')),
  timeoutMs: v.pipe(integerIn(HEALTH_CHECK_RANGES.timeoutMs), v.description("Milliseconds to wait for a probe's answer, below intervalSeconds × 1000")),
  healthyThreshold: v.pipe(integerIn(HEALTH_CHECK_RANGES.healthyThreshold), v.description('Passing probes in a row that make a target healthy')),
  unhealthyThreshold: v.pipe(integerIn(HEALTH_CHECK_RANGES.unhealthyThreshold), v.description('Failing probes in a row that make a target unhealthy')),
  expectStatus: v.pipe(v.union([integerIn([100, 599]), v.picklist(STATUS_CLASSES)]), v.description('A status (200) or a class ("2xx")')),
});

/** A service's outlier detection (design.md §4.13), every field present. */
const outlierDetection = v.strictObject({
  maxFails: v.pipe(integerIn(OUTLIER_DETECTION_RANGES.maxFails), v.description('Failures within the window that eject a target')),
  windowSeconds: v.pipe(integerIn(OUTLIER_DETECTION_RANGES.windowSeconds), v.description('Seconds in which maxFails failures eject a target')),
  ejectSeconds: v.pipe(integerIn(OUTLIER_DETECTION_RANGES.ejectSeconds), v.description("Seconds of a target's first ejection; doubled on each repeat, capped")),
});

/** A service's writable fields, as the API answers them and the registry document lists them (design.md §4.9). */
const declaredEntries = {
  name: v.string(),
  path: v.string(),
  hosts: v.pipe(
    v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(MAX_HOSTS))),
    v.description('The host names the service is reached on, at its path: lower-case A-labels, *. for one label; absent when none'),
  ),
  targetUrl: v.pipe(v.string(), v.description("The first target's url")),
  targets: v.pipe(v.array(serviceTarget), v.minLength(1), v.maxLength(MAX_TARGETS), v.description('The pool, no url twice')),
  requireAuth: v.boolean(),
  description: v.string(),
  enabled: v.boolean(),
  access: v.nullable(accessPolicy),
  forwardAuthorization: v.boolean(),
  loadBalancing: v.picklist(LOAD_BALANCING_METHODS),
  healthCheck: v.pipe(v.nullable(healthCheck), v.description('null: no active checks')),
  outlierDetection,
  retries: v.pipe(integerIn([0, MAX_RETRIES]), v.description('Most retries on another target of a request that reached one')),
  rules: v.pipe(v.array(serviceRule), v.maxLength(MAX_RULES), v.description('Rules inside the service, in order, the first matching one deciding; [] for none')),
  corsPreflight: v.pipe(v.picklist(['auth', 'public']), v.description('public: CORS preflights pass without sign-in')),
  maxAge: v.pipe(v.nullable(maxAge), v.description("Step-up: the sign-in's most age in seconds for requests no rule decides (a minute of leeway); null: any")),
  acr: v.pipe(v.nullable(acrValues), v.description("Step-up: the sign-in's acr must be one of these for requests no rule decides; null: any")),
};

/**
 * A registry entry (interface.md §2.1), with `access`, `forwardAuthorization`, the pool's fields,
 * `rules`, `corsPreflight`, `maxAge` and `acr` always present (design.md §5, §4.13, §4.18).
 */
const service = v.strictObject({ id: uuid, ...declaredEntries, createdAt: timestamp, updatedAt: timestamp });

/** An access-log record (interface.md §2.2); `user_id` is null for an anonymous request. */
const accessLogRecord = v.strictObject({
  id: rowId,
  service_id: uuid,
  user_id: v.nullable(v.string()),
  path: v.pipe(v.string(), v.description('The requested path with its query, as received, cut to 2,048 bytes (then `path_truncated`)')),
  method: v.string(),
  status_code: v.pipe(v.number(), v.integer()),
  response_time_ms: count,
  ip_address: v.string(),
  timestamp,
  target: v.pipe(v.nullable(v.string()), v.description("The url of the service's target that answered (the last tried); null when none did: the gateway answered itself")),
  host: v.pipe(v.nullable(v.string()), v.description('The service host the request was routed by (lower case, no port; for a wildcard service the name it matched); null when routed by path alone')),
  protocol: v.pipe(v.picklist(['http/1.1', 'h2']), v.description('The protocol the client spoke: `h2` for HTTP/2 (over TLS, or h2c with H2C), `http/1.1` for HTTP/1.x and for records stored before HTTP/2')),
  count: v.pipe(v.number(), v.integer(), v.minValue(1), v.description("Requests the record stands for: 1, or more for a summary of one client address's requests to the service within one minute and status class (refused by the rate limit, or past the address's share of the day's access-log budget); its other fields are the first request's")),
  path_truncated: v.pipe(v.boolean(), v.description('True when `path` was cut to 2,048 bytes and ends with `…`')),
  request_id: v.pipe(v.nullable(v.string()), v.description("The request's id, as its answer's X-Request-Id carried it: 16 lowercase hex characters, a traced request's trace id (32), or a trusted proxy's own (1–128 visible ASCII characters); null for records stored before request ids")),
  trace_id: v.pipe(v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/))), v.description("A traced request's trace id (W3C Trace Context, 32 lowercase hex characters); null when the request was not traced")),
  span_id: v.pipe(v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/))), v.description("A traced request's server span id (16 lowercase hex characters); null when the request was not traced")),
  verify: v.optional(v.pipe(v.literal(true), v.description("Present on the verify endpoint's decision about an ingress's request (GET /auth/verify): path and method are the original request's, which the gateway judged and did not forward"))),
});

/** A page of a service's access log (interface.md §4.2, README "Where access-log records go"). */
const accessLogPage = v.strictObject({
  logs: v.pipe(v.array(accessLogRecord), v.description('Newest first')),
  total: v.pipe(
    count,
    v.description(
      'How many records match the filters, all pages together: exact for the service, status class and time range (from per-minute counts); with method, path, host, user or requestId, the matches among the newest 100,000 records the other filters pass',
    ),
  ),
  partial: v.optional(
    v.pipe(v.literal(true), v.description('method, path, host, user or requestId was checked on the newest 100,000 records of the other filters only: total is a lower bound')),
  ),
});

const auditAction = v.picklist(AUDIT_ACTIONS);

/** An audit record (interface.md §2.3); `user_id` is a subject, `token:<id>` (design.md §4.8) or null. */
const auditRecord = v.strictObject({
  id: rowId,
  action: auditAction,
  user_id: v.nullable(v.string()),
  service_id: v.nullable(v.string()),
  ip_address: v.nullable(v.string()),
  details: v.pipe(v.string(), v.description('JSON text of an object')),
  timestamp,
});

/** A page of the audit log (interface.md §4.3). */
const auditLogPage = v.strictObject({
  logs: v.pipe(v.array(auditRecord), v.description('Newest first')),
  total: v.pipe(count, v.description('How many records there are, all pages together')),
});

/** A recent-activity entry of the statistics (interface.md §2.3). */
const recentActivity = v.strictObject({ id: rowId, action: auditAction, user_id: v.nullable(v.string()), timestamp });

/** The statistics object (interface.md §2.5). */
const statistics = v.strictObject({
  totalServices: count,
  enabledServices: count,
  disabledServices: count,
  recentActivity: v.pipe(v.array(recentActivity), v.description('The newest audit entries, newest first')),
});

const latency = v.pipe(v.nullable(v.number()), v.description('Milliseconds; null without requests'));

/** One step of a traffic series: requests by status class, latency percentiles. */
const trafficPoint = v.strictObject({
  time: v.pipe(timestamp, v.description('Start of the step')),
  requests: count,
  ...(Object.fromEntries(STATUS_CLASSES.map((name) => [name, count])) as Record<StatusClass, typeof count>),
  p50: latency,
  p95: latency,
});

/** A traffic series of `GET /dashboard/traffic`. */
const trafficSeries = v.strictObject({
  range: v.picklist(Object.keys(TRAFFIC_RANGES) as TrafficRange[]),
  serviceId: v.pipe(v.nullable(uuid), v.description('null: all services together')),
  stepSeconds: count,
  from: timestamp,
  to: timestamp,
  points: v.pipe(v.array(trafficPoint), v.description('Oldest first; the last is the step in progress')),
});

const apiTokenEntries = {
  id: uuid,
  name: v.string(),
  scope: v.pipe(v.picklist(TOKEN_SCOPES), v.description("read: GET and HEAD; write: every method; write sessions: write, and ending an administrator's sessions too")),
  createdBy: v.pipe(v.string(), v.description("The creating administrator's subject")),
  createdAt: timestamp,
  lastUsedAt: v.pipe(v.nullable(timestamp), v.description('To the minute; null: never used')),
  expiresAt: v.pipe(v.nullable(timestamp), v.description('null: never expires')),
};

/** An admin API token as listed (design.md §4.8): never its secret or hash. */
const apiToken = v.strictObject(apiTokenEntries);

/** A token just made: the only answer that shows its secret. */
const createdApiToken = v.strictObject({
  ...apiTokenEntries,
  secret: v.pipe(v.string(), v.regex(/^ght_[A-Za-z0-9_-]{43}$/), v.description('Shown this once: Authorization: Bearer <secret>')),
});

/** The session user (interface.md §2.4). */
const sessionUser = v.strictObject({
  sub: v.string(),
  name: v.string(),
  email: v.pipe(v.string(), v.description("The verified email, or '' without one")),
  isAdmin: v.boolean(),
});

/** A session as the sessions API lists it (admin/sessions/session-view.ts): never its cookie or tokens. */
const sessionSummary = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{22}$/), v.description("The session's public handle (not its cookie)")),
  user: v.strictObject({ sub: v.string(), name: v.string(), email: v.pipe(v.string(), v.description("The verified email, or ''")) }),
  createdAt: v.pipe(timestamp, v.description('Signed in')),
  lastSeenAt: v.pipe(timestamp, v.description('Last use, recorded at most once a minute')),
  expiresAt: v.pipe(timestamp, v.description('The end of its SESSION_TTL (an idle timeout or the provider may end it sooner)')),
  ipAddress: v.pipe(v.string(), v.description('Client address at sign-in')),
  userAgent: v.pipe(v.string(), v.description('User-Agent at sign-in, at most 300 characters')),
});

/** `GET /api/sessions`: a page of live sessions, newest first, and how many match. */
const sessionPage = v.strictObject({ sessions: v.array(sessionSummary), total: count });

/** `DELETE /api/users/:sub/sessions`: how many sessions ended. */
const revokedSessions = v.strictObject({ revoked: count });

/** The identity assertion's key rotation (design.md §4.7). */
const rotatedKey = v.strictObject({
  kid: v.pipe(v.string(), v.description('The new signing key (RFC 7638 thumbprint)')),
  previousKid: v.pipe(v.nullable(v.string()), v.description('The key it replaces, still published until its assertions expire')),
});

/** `GET /api/services/export`: the whole registry, ordered by path (design.md §4.9). */
const registryDocument = v.strictObject({
  version: v.pipe(v.literal(1), v.description('The document format')),
  services: v.array(v.strictObject({ id: v.pipe(v.string(), v.description('Informative: entries are matched by path and hosts')), ...declaredEntries })),
});

/** One field's change in a plan, as `SERVICE_UPDATED` records it. */
const fieldChange = v.strictObject({ before: v.unknown(), after: v.unknown() });

/** What applying a document does, or would do with `dryRun=true` (design.md §4.9), each list ordered by path. */
const registryPlan = v.strictObject({
  dryRun: v.boolean(),
  create: v.array(v.strictObject({ path: v.string(), id: v.pipe(v.optional(v.string()), v.description('Once applied')), service: v.strictObject(declaredEntries) })),
  update: v.array(v.strictObject({ path: v.string(), id: v.string(), name: v.string(), changes: v.record(v.string(), fieldChange) })),
  delete: v.array(v.strictObject({ path: v.string(), id: v.string(), name: v.string() })),
  unchanged: v.array(v.string()),
});

/** A target's state (design.md §4.13): `unhealthy` by active health checks, `ejected` by outlier detection. */
const targetState = v.picklist(TARGET_STATES);

/** One proxy process's view of a target, from its latest report (admin/registry/service-health.ts). */
const proxyTargetHealth = v.strictObject({
  proxy: v.pipe(v.string(), v.description('The proxy process: host name and process id (web-1:4312)')),
  state: targetState,
  since: v.pipe(timestamp, v.description('Since when the target has been in this state there')),
  lastError: v.pipe(v.nullable(v.string()), v.description("That process's latest failure of the target (ECONNREFUSED, status 503, timeout); null: none")),
});

/** One target of a service and its health across the proxy processes. */
const targetHealth = v.strictObject({
  url: v.string(),
  weight: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
  state: v.pipe(
    targetState,
    v.description('Overall: unknown when no proxy process reported it within the last minute (or each said unknown); healthy when every one that knows says healthy; else the most common of unhealthy and ejected among them, a tie unhealthy'),
  ),
  proxies: v.pipe(v.array(proxyTargetHealth), v.description('Each proxy process whose report of the last minute names the target, ordered by proxy')),
});

/** `GET /api/services/:id/health`. */
const serviceHealth = v.strictObject({ targets: v.pipe(v.array(targetHealth), v.description("The service's targets, in the registry's order")) });

/** The error object (interface.md §2.6). */
const error = v.strictObject({ error: v.string() });

/** A validation error (design.md §5): the message names every bad field or parameter, `fields` says why for each. */
const validationError = v.strictObject({
  error: v.string(),
  fields: v.pipe(v.record(v.string(), v.string()), v.description('Field or parameter (access.emails for a list of a policy) → why')),
});

/** This description itself: an OpenAPI 3.1 document. */
const openApiDocument = v.looseObject({ openapi: v.pipe(v.string(), v.startsWith('3.1.')), info: v.looseObject({}), paths: v.looseObject({}) });

/** A host's certificate by ACME (design.md §4.15): an entry of GET /api/certificates. */
const certificate = v.strictObject({
  host: v.pipe(v.string(), v.description('The host name (lower case)')),
  issuer: v.pipe(v.nullable(v.string()), v.description("The issuing CA's common name; null before the first certificate")),
  notAfter: v.pipe(v.nullable(timestamp), v.description('When the certificate held expires; null before the first')),
  nextRenewal: v.pipe(v.nullable(timestamp), v.description('When the next order is due: at two thirds of the lifetime, or the retry after a failure; null while one is due now')),
  lastError: v.pipe(v.nullable(v.string()), v.description("Why the last order failed (the CA's problem or a network error); null after a success")),
  status: v.pipe(v.picklist(['pending', 'valid', 'failing', 'expired']), v.description('pending: none yet (a self-signed one is served); valid; failing: the last order failed, retried with backoff; expired')),
});

/** `POST /api/services/:id/explain`'s answer (design.md §4.18, admin/explain/explanation.ts). */
const explanation = v.strictObject({
  method: v.pipe(v.string(), v.description('The method asked about, in capitals')),
  path: v.pipe(v.string(), v.description('The path asked about, without its query')),
  routingKey: v.pipe(v.string(), v.description('The path as routing and rules compare it: decoded, lowercased, separators collapsed, ; parameters dropped')),
  matchesService: v.pipe(v.boolean(), v.description('false: the request does not reach this service at all (another service, the gateway itself, another host or prefix)')),
  routedTo: v.optional(v.pipe(v.strictObject({ id: uuid, name: v.string(), path: v.string() }), v.description('The service that takes the path instead'))),
  decidedBy: v.pipe(v.picklist(['routing', 'rule', 'corsPreflight', 'service']), v.description("routing: not this service; rule: the rule in rule; corsPreflight: the service's corsPreflight public; service: its requireAuth and access")),
  rule: v.optional(v.pipe(v.strictObject({ index: v.pipe(count, v.description('Its position in rules, from 0')), ...serviceRule.entries }), v.description('The deciding rule'))),
  outcome: v.pipe(
    v.picklist(['elsewhere', 'public', 'deny', 'sign-in required', 'allowed', 'refused', 'disabled']),
    v.description('public: forwarded without sign-in; deny: 403 by a deny rule; sign-in required: 401 or a browser sent to sign in; allowed: forwarded for this caller; refused: 403 by an access policy; disabled: 503'),
  ),
  reason: v.pipe(v.string(), v.description('One sentence saying why')),
});

/** The answers' schemas by the name the document gives them (`#/components/schemas/<name>`). */
export const RESPONSE_SCHEMAS = {
  Service: service,
  AccessPolicy: accessPolicy,
  ServiceRule: serviceRule,
  ServiceTarget: serviceTarget,
  HealthCheck: healthCheck,
  OutlierDetection: outlierDetection,
  AccessLogRecord: accessLogRecord,
  AccessLogPage: accessLogPage,
  AuditRecord: auditRecord,
  AuditLogPage: auditLogPage,
  RecentActivity: recentActivity,
  Statistics: statistics,
  TrafficPoint: trafficPoint,
  TrafficSeries: trafficSeries,
  Certificate: certificate,
  ApiToken: apiToken,
  CreatedApiToken: createdApiToken,
  SessionUser: sessionUser,
  Session: sessionSummary,
  SessionPage: sessionPage,
  RevokedSessions: revokedSessions,
  RotatedKey: rotatedKey,
  RegistryDocument: registryDocument,
  RegistryPlan: registryPlan,
  ServiceHealth: serviceHealth,
  Explanation: explanation,
  TargetHealth: targetHealth,
  ProxyTargetHealth: proxyTargetHealth,
  Error: error,
  ValidationError: validationError,
  OpenApiDocument: openApiDocument,
};
