/**
 * Domain types shared by the data plane (proxy/) and the control plane (admin/).
 * Field names follow the interface (interface.md §2); timestamps inside the process are epoch ms.
 */

/** A registry entry (interface.md §2.1). Timestamps are ISO 8601 UTC strings, as the API returns them. */
export interface Service {
  id: string;
  name: string;
  /** Public path prefix: `/` or `/seg(/seg)*`, no trailing slash (design.md §5); within each of `hosts` when it has any. */
  path: string;
  /**
   * Host names the service is reached on (0–32; lower-case A-labels, no port, no trailing dot;
   * `*.` as the first label matches one label): absent or empty, every host no service names.
   */
  hosts?: string[];
  /** Upstream base URL: absolute http(s), may carry a base path, no query or fragment. */
  targetUrl: string;
  requireAuth: boolean;
  description: string;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
  /** Who may use the service once signed in (design.md §4.7); null or absent: any signed-in caller. */
  access?: AccessPolicy | null;
  /** Forward a verified `Authorization: Bearer` token to the target (design.md §4.7); default false. */
  forwardAuthorization?: boolean;
  /**
   * The pool of targets (1–64); `targetUrl` is the first one's url. Absent in snapshots from before
   * pools: then the one target `targetUrl` (see shared/services/target-pool-settings.ts `poolSettingsOf`).
   */
  targets?: ServiceTarget[];
  /** How a request picks its target; default `round_robin`. */
  loadBalancing?: LoadBalancing;
  /** Active health checks, or null (default): none. */
  healthCheck?: HealthCheck | null;
  /** Passive health checks (outlier detection), always on; defaults 3 fails in 10 s eject for 30 s. */
  outlierDetection?: OutlierDetection;
  /** Most retries on another target once a request reached one (0–5, default 1). */
  retries?: number;
  /**
   * Rules inside the service (design.md §4.18): 0–64, the first matching one decides; a request
   * none matches follows `requireAuth` and `access`. Absent in snapshots from before rules: none.
   */
  rules?: ServiceRule[];
  /** `public`: CORS preflights pass without sign-in (design.md §4.18); `auth` (default, or absent): as any request. */
  corsPreflight?: CorsPreflight;
  /**
   * Step-up sign-in (design.md §4.18): the caller's sign-in must be at most this many seconds old
   * (0–31,536,000); null or absent: any age. For requests no rule decides.
   */
  maxAge?: number | null;
  /** Step-up sign-in: the caller's `acr` must be one of these (1–8); null or absent: any. For requests no rule decides. */
  acr?: string[] | null;
}

/** Whether a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) needs sign-in like any request. */
export type CorsPreflight = 'auth' | 'public';

/**
 * One rule of a service (design.md §4.18): requests whose path, within the service, falls under
 * one of `paths` (on the routing key: whole segments, `*` for any one segment) and whose method is
 * one of `methods` (any when absent; `GET` covers `HEAD`) get `action`.
 */
export interface ServiceRule {
  /** 1–32 paths within the service: `/` or `/seg(/seg)*`, a segment `*` matching any one segment. */
  paths: string[];
  /** HTTP methods in capitals (1–16); absent: every method. */
  methods?: string[];
  /** `public`: no sign-in needed; `deny`: 403 for everyone; `require`: sign-in and `access`. */
  action: RuleAction;
  /** With `require` only: who may pass, instead of the service's policy; null: any signed-in caller. */
  access?: AccessPolicy | null;
  /** With `require` only: the sign-in's most age in seconds, instead of the service's (step-up, design.md §4.18); absent: any. */
  maxAge?: number;
  /** With `require` only: the accepted `acr` values (1–8), instead of the service's; absent: any. */
  acr?: string[];
}

/** What a matching rule does (design.md §4.18). */
export type RuleAction = 'public' | 'deny' | 'require';

/** One target of a service's pool. */
export interface ServiceTarget {
  /** Absolute http(s) base URL, checked as `targetUrl` is. */
  url: string;
  /** Relative share of requests, 1–100 (default 1). */
  weight: number;
}

/**
 * `round_robin`: weighted, smooth (nginx's algorithm); `least_requests`: the less busy of two
 * random targets (power of two choices); `client_ip`: consistent hashing of the client address;
 * `cookie`: a signed sticky cookie scoped to the service's prefix.
 */
export type LoadBalancing = 'round_robin' | 'least_requests' | 'client_ip' | 'cookie';

/** Active health checks of every target of a service, run by each proxy process on its own. */
export interface HealthCheck {
  /** Path probed with GET, relative to the target's base path; starts with `/`. */
  path: string;
  /** Between probes of one target, in seconds (1–300). */
  intervalSeconds: number;
  /** Longest wait for a probe's response head, in ms (100–60,000, below the interval). */
  timeoutMs: number;
  /** Passing probes in a row that make an unhealthy target healthy (1–10). */
  healthyThreshold: number;
  /** Failing probes in a row that make a healthy target unhealthy (1–10). */
  unhealthyThreshold: number;
  /** The status a passing probe answers: a status (`200`) or a class (`"2xx"`). */
  expectStatus: number | string;
}

/** Passive health checks (Envoy's outlier detection). */
export interface OutlierDetection {
  /** Failures (connection failures, 502/503/504) within the window that eject a target (1–100). */
  maxFails: number;
  /** The window, in seconds (1–3600). */
  windowSeconds: number;
  /** The first ejection's length, in seconds (1–3600); doubled on each repeat, capped. */
  ejectSeconds: number;
}

/** A target's state as one proxy process sees it (`GET /api/services/:id/health`). */
export type TargetState = 'healthy' | 'unhealthy' | 'ejected' | 'unknown';

/**
 * What one proxy process reports of its targets over the event bus, every few seconds and on each
 * change; the admin plane drops a report older than a minute.
 */
export interface TargetHealthReport {
  /** Unique per process: host name and process id (`web-1:4312`). */
  proxy: string;
  /** When the report was made, epoch ms. */
  at: number;
  /** By service id: each target (by url) as this process sees it. */
  services: Record<string, TargetHealthEntry[]>;
}

/** One target in a {@link TargetHealthReport}. */
export interface TargetHealthEntry {
  url: string;
  state: TargetState;
  /** Since when the target has been in `state`, epoch ms. */
  since: number;
  /** The latest failure (`ECONNREFUSED`, `status 503`, `timeout`), or null. */
  lastError: string | null;
}

/**
 * A service's access policy (design.md §4.7): a caller matching any entry of any list is allowed;
 * all lists empty means any signed-in caller.
 */
export interface AccessPolicy {
  /** Group names, matched exactly against the caller's groups (OIDC_GROUPS_CLAIM). */
  groups: string[];
  /** Email addresses, matched case-insensitively against the caller's verified email. */
  emails: string[];
  /** Domains (no `@`), matched case-insensitively against the verified email's domain, exactly. */
  emailDomains: string[];
  /** Subject identifiers (`sub`), matched exactly. */
  subjects: string[];
}

/** The signed-in user as the API shows it (interface.md §2.4). */
export interface SessionUser {
  /** Subject identifier from the issuer. */
  sub: string;
  name: string;
  /** The verified email, or `''` (design.md §4.2). */
  email: string;
  isAdmin: boolean;
  /** The groups claim (OIDC_GROUPS_CLAIM) at sign-in (design.md §4.7); absent in sessions made before. */
  groups?: string[];
  /**
   * When the user last authenticated at the provider, epoch **ms** (the ID token's or bearer token's
   * `auth_time`, OIDC Core 1.0 §2, which is in seconds). Absent when the token had none, and in
   * sessions made before step-up: unknown, which no `maxAge` accepts (design.md §4.18).
   */
  authTime?: number;
  /** The token's `acr` (Authentication Context Class Reference); absent: unknown, which no `acr` list accepts. */
  acr?: string;
  /** The token's `amr` (Authentication Methods References, RFC 8176), for the record; absent when it had none. */
  amr?: string[];
}

/**
 * A server-side session. Never sent to clients or upstreams as a whole; the sessions API shows
 * the parts of it {@link SessionView} names. Times are epoch ms.
 */
export interface Session {
  /**
   * The session's public handle (`GET /api/sessions` `id`): 128 random bits, base64url, never
   * derived from the session id (the cookie's secret), so showing it reveals nothing usable.
   */
  handle: string;
  user: SessionUser;
  /** Per-session CSRF token (design.md §4), 256 random bits, base64url. */
  csrfToken: string;
  /** The ID token, kept only as `id_token_hint` for RP-initiated logout. Secret: never logged. */
  idToken: string | null;
  createdAt: number;
  /** The session is absolute, not sliding (SESSION_TTL); the checks of session-gate.ts end it sooner. */
  expiresAt: number;
  /** The latest recorded use, at most a minute behind the real one (SessionStore.touch). */
  lastSeenAt: number;
  /** Client address and `User-Agent` (≤ 300 characters) at sign-in, for the sessions list. */
  ipAddress: string;
  userAgent: string;
  /** The provider's session id (the ID token's `sid`), which a back-channel logout names. */
  sid?: string;
  /** The refresh token, sealed by shared/identity/token-encryption.ts (bound to {@link handle}). Secret. */
  refreshToken?: string;
  /** The latest successful check at the provider: sign-in or refresh. */
  checkedAt: number;
  /** When a refresh first found the provider down (unreachable, 5xx); cleared by a success. */
  providerDownSince?: number;
  /**
   * `admin`: signed in on ADMIN_URL's origin, and valid only there (design.md §4.5): neither the data
   * plane nor the public origin accepts it, whatever cookie carries it. Absent: the public origin's.
   */
  scope?: 'admin';
}

/** A session as the sessions API shows it (`GET /api/sessions`): never its id, tokens or CSRF token. */
export interface SessionView {
  id: string;
  user: { sub: string; name: string; email: string };
  /** ISO 8601 UTC. */
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ipAddress: string;
  userAgent: string;
}

/** One access-log record as the data plane produces it (interface.md §2.2, before it gets its row id). */
export interface AccessLogEntry {
  /** Unique id per record (a UUIDv7, see event-id.ts), so a re-delivered batch inserts nothing twice. */
  eventId: string;
  serviceId: string;
  /** Subject of the session, or null for an anonymous request. */
  userId: string | null;
  /** The raw request path with its query, as received, cut to 2,048 bytes (then `pathTruncated`). */
  path: string;
  method: string;
  statusCode: number;
  /** From request start to response end, in ms. */
  responseTimeMs: number;
  ipAddress: string;
  /** Epoch ms at request start. */
  timestamp: number;
  /**
   * The url of the pool's target that answered (the last one tried); null or absent when no
   * target answered (the gateway's own answer: 401, 404, 503 when none could be reached, …).
   */
  target?: string | null;
  /**
   * The host name the request was routed by when a service names it (design.md §3.2), in the
   * registry's normal form (lower case, A-labels, no port, no trailing dot): `app.example.com`, or
   * for a wildcard service the name the client used (`a.apps.example.com`). Null or absent for a
   * request routed by path alone on a host no service names.
   */
  host?: string | null;
  /**
   * The protocol the client spoke (design.md §4.17): `h2` for HTTP/2, over TLS or h2c (Envoy and
   * Caddy log both so); absent for HTTP/1.1 (and 1.0), so the common record of old carries nothing more.
   */
  protocol?: 'h2';
  /**
   * How many requests this record stands for: absent (or 1) for one request; more for a summary of
   * one client address's requests to one service within one minute (refused by the rate limit, or
   * over the address's share of a day's access-log budget: design.md §3.9).
   */
  count?: number;
  /** True when `path` was cut to the stored maximum (2,048 bytes) and ends with `…`; absent otherwise. */
  pathTruncated?: boolean;
  /**
   * True for a decision the verify endpoint gave an ingress (design.md §4.19): `path` and `method`
   * are the ingress's original request, which the gateway judged but did not forward. Absent otherwise.
   */
  verify?: boolean;
  /**
   * The request's id (design.md §3.10): 16 lowercase hex characters, a traced request's trace id
   * (32), or a trusted proxy's `X-Request-Id` (1–128 visible ASCII characters). Absent on records
   * of proxies older than request ids.
   */
  requestId?: string;
  /** A traced (sampled) request's trace id, 32 lowercase hex characters (W3C Trace Context); absent otherwise. */
  traceId?: string;
  /** A traced request's server span id, 16 lowercase hex characters; absent otherwise. */
  spanId?: string;
}
