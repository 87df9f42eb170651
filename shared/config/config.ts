import * as v from 'valibot';
import { parseByteSize } from './byte-size.js';
import { parseDuration, parseRateLimit, type RateLimit } from './durations.js';
import { otlpLogsUrl, parseOtlpHeaders } from './otlp-headers.js';
import { parseEncryptionKeys } from '../identity/token-encryption.js';
import { readRedisTarget, type RedisTarget } from './redis-target.js';
import { readTlsSettings, type TlsSettings } from './tls-settings.js';
import { readTracingSettings, TRACING_VARIABLES, type TracingSettings } from './tracing-settings.js';
import type { VariableDoc } from './variable-doc.js';
import { TrustedProxies } from '../http/trusted-proxies.js';

/**
 * Gatehouse configuration, read once from the environment (design.md §6) and validated with valibot.
 * Each variable's default and meaning is written once, in {@link VARIABLES}; the README's table is
 * checked against it by a test.
 */
export interface Config {
  /** Public listener (the data plane). */
  port: number;
  /** The admin plane's own listener ("admin-port API"). */
  adminPort: number;
  /** The origin users reach the gateway at; decides cookie names and `Secure`. No trailing slash. */
  publicUrl: URL;
  /**
   * The console's and admin API's own origin (design.md §4.5), served by the admin port; undefined:
   * they share PUBLIC_URL's origin with the proxied services (the interface's single origin).
   */
  adminUrl: URL | undefined;
  /** Address the admin port binds to (`127.0.0.1`: reachable from this machine only). */
  adminHost: string;
  /** TLS on PORT and ADMIN_PORT, HTTP_PORT's redirect and HSTS (shared/config/tls-settings.ts). */
  tls: TlsSettings;
  /**
   * H2C=true: plain PORT also takes HTTP/2 with prior knowledge (RFC 9113 §3.3), for a TLS
   * terminator in front that speaks h2c (design.md §4.17). PORT over TLS offers h2 by ALPN either way.
   */
  h2c: boolean;
  databasePath: string;
  /** REDIS_URL (single-node mode); see {@link redis} for every mode. */
  redisUrl: string | undefined;
  /** How Redis is reached (shared/config/redis-target.ts): one node, a Sentinel group or a Cluster; undefined: embedded implementations. */
  redis: RedisTarget | undefined;
  oidc: {
    issuer: URL | undefined;
    clientId: string | undefined;
    clientSecret: string | undefined;
    scopes: string;
    groupsClaim: string;
    /**
     * OIDC_API_AUDIENCES: the `aud` values a bearer token may carry (design.md §4.7); empty: bearer
     * tokens are off and an `Authorization` header is forwarded as any other field.
     */
    apiAudiences: readonly string[];
  };
  admins: { emails: ReadonlySet<string>; subjects: ReadonlySet<string>; groups: ReadonlySet<string> };
  /** Absolute session lifetime in ms. */
  sessionTtlMs: number;
  /**
   * What ends a session before its TTL (admin/sessions/, shared/identity/session-gate.ts), all in ms:
   * `revalidateMs`, how long a session goes unchecked at the provider before a request starts a
   * refresh; `graceMs`, how long a session outlives a provider that is down; `idleTimeoutMs`, how
   * long it may go unused (undefined: no idle timeout).
   */
  sessionChecks: { revalidateMs: number; graceMs: number; idleTimeoutMs: number | undefined };
  /**
   * SESSION_ENCRYPTION_KEY: AES-256 keys for refresh tokens at rest (shared/identity/token-encryption.ts),
   * the first encrypting, all decrypting; empty: the admin process uses the key it keeps in its
   * database (admin/credentials/session-key-store.ts).
   */
  sessionEncryptionKeys: readonly Buffer[];
  /** null: limiter off. */
  rateLimitGeneral: RateLimit | null;
  rateLimitAuth: RateLimit | null;
  /** RATE_LIMIT_TOKEN: requests per admin API token (design.md §4.8); null: off. */
  rateLimitToken: RateLimit | null;
  /** CIDRs, addresses or proxy-addr names (`loopback`, `uniquelocal`) whose X-Forwarded-For (or Forwarded) is believed. */
  trustProxy: TrustedProxies;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  adminInternalUrl: URL;
  internalPort: number;
  /** Data-plane workers `npm run start:proxy` forks (node:cluster), sharing PORT. */
  proxyWorkers: number;
  /** How long the proxy waits for an upstream's response headers before 504, in ms. */
  upstreamTimeoutMs: number;
  /** A day's raw access-log records are deleted (its file) once the day ended this many days ago. */
  accessLogRetentionDays: number;
  /** ACCESS_LOG_MAX_SIZE in bytes; undefined: a fifth of the disk the access log is on (admin/access-log/writing/disk-budget.ts). */
  accessLogMaxBytes: number | undefined;
  /** ACCESS_LOG_EXPORT=otlp: where every access-log record is also sent; undefined: nowhere. */
  accessLogExport: AccessLogExport | undefined;
  /**
   * TRACE_UI_URL: a trace viewer's http(s) URL with `{traceId}` where a trace id (32 lowercase hex
   * characters) goes; the console links each traced access-log record there. Undefined: no links.
   */
  traceUiUrl: string | undefined;
  /** Lifetime of an identity assertion (design.md §4.7), in ms: whole seconds, at least 1 s. */
  assertionTtlMs: number;
  /** Age at which the admin plane rotates the assertion signing key by itself (design.md §4.7), in ms. */
  assertionKeyLifetimeMs: number;
  /** Traces and their export (shared/config/tracing-settings.ts, design.md §3.10). */
  tracing: TracingSettings;
}

/**
 * The OTLP/HTTP export of the access log (README "Access log export"): the collector's logs
 * endpoint (OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/logs`) and the headers sent with every request
 * (OTEL_EXPORTER_OTLP_HEADERS; they may hold credentials, so they are never logged).
 */
export interface AccessLogExport {
  url: URL;
  headers: Record<string, string>;
  /** ACCESS_LOG_OTLP_BUFFER_SIZE: bytes the export holds while the collector is slow or away; past it the oldest records are dropped. */
  bufferBytes: number;
}

export type { VariableDoc } from './variable-doc.js';

export const VARIABLES: readonly VariableDoc[] = [
  { name: 'PORT', default: '8080', meaning: 'Public listener: proxied services and the gateway pages.' },
  { name: 'ADMIN_PORT', default: '8081', meaning: 'Admin-port API: the admin plane on its own port.' },
  { name: 'ADMIN_HOST', default: '127.0.0.1', meaning: 'Address the admin port binds to; `0.0.0.0` or `::` to reach it from other machines (split-mode proxies, an `ADMIN_URL` load balancer).' },
  { name: 'PUBLIC_URL', default: 'http://localhost:8080', meaning: 'Origin users reach the gateway at; `https:` turns on `Secure` and `__Host-` cookies.' },
  { name: 'ADMIN_URL', default: undefined, meaning: 'Origin of the console and admin API, served by the admin port (`https://admin.gateway.example.com`, or `http://localhost:8081`); `/api` and `/dashboard` then answer only there, with their own sign-in and session cookie. Unset: they share `PUBLIC_URL` with the proxied apps (see Security notes).' },
  { name: 'TLS_CERT_FILE', default: undefined, meaning: 'PEM certificate (with its chain) that makes `PORT` speak HTTPS, with TLS_KEY_FILE; PUBLIC_URL must then be `https:`. Served to clients whose SNI name TLS_CERTS_DIR has no pair for (or that send none). Reloaded when the file changes (see TLS).' },
  { name: 'TLS_KEY_FILE', default: undefined, meaning: 'PEM private key of TLS_CERT_FILE.' },
  { name: 'TLS_CERTS_DIR', default: undefined, meaning: 'Folder of more certificates chosen by SNI: `<name>.crt` + `<name>.key` (`app.example.com.crt`; `_wildcard.example.com.crt` for `*.example.com`), reloaded when they change; alone (without TLS_CERT_FILE) a name it has no pair for is refused in the handshake (see TLS).' },
  { name: 'ADMIN_TLS_CERT_FILE', default: undefined, meaning: 'PEM certificate (with its chain) of ADMIN_URL\'s listener (`ADMIN_PORT`), with ADMIN_TLS_KEY_FILE; ADMIN_URL must be `https:`. Unset with an https ADMIN_URL and TLS_CERT_FILE or TLS_CERTS_DIR set: the admin port serves those (see TLS).' },
  { name: 'ADMIN_TLS_KEY_FILE', default: undefined, meaning: 'PEM private key of ADMIN_TLS_CERT_FILE.' },
  { name: 'HTTP_PORT', default: undefined, meaning: 'Plain-HTTP listener (`80`) that answers every request with 308 to the same path on https (PUBLIC_URL\'s or ADMIN_URL\'s origin, by `Host`; any other `Host` goes to PUBLIC_URL). Needs an https PUBLIC_URL.' },
  { name: 'HSTS', default: 'max-age=31536000', meaning: '`Strict-Transport-Security` on every answer of a listener that speaks HTTPS (RFC 6797), unless a proxied service sends its own; `0` or `off`: not sent. Never sent on plain HTTP.' },
  { name: 'H2C', default: 'false', meaning: '`true`: a plain-HTTP `PORT` also takes HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3), for a TLS terminator in front that speaks it to the gateway. `PORT` over TLS offers HTTP/2 by ALPN whatever this says (see HTTP/2).' },
  { name: 'ACME_EMAIL', default: undefined, meaning: 'Turns on certificates by ACME (RFC 8555): the admin process keeps an account with this contact at ACME_DIRECTORY_URL and obtains and renews a certificate for PUBLIC_URL\'s host, ADMIN_URL\'s and every service host but wildcards; `PORT` speaks HTTPS (PUBLIC_URL must be `https:`). Set it on every process (see Certificates by ACME).' },
  { name: 'ACME_DIRECTORY_URL', default: 'https://acme-v02.api.letsencrypt.org/directory', meaning: 'The ACME server\'s directory (Let\'s Encrypt\'s production one by default; `https://acme-staging-v02.api.letsencrypt.org/directory` to try things out).' },
  { name: 'ACME_CA_FILE', default: undefined, meaning: 'PEM file of CA certificates trusted for ACME_DIRECTORY_URL\'s own TLS besides the system\'s: a private ACME server (step-ca, a test\'s pebble).' },
  { name: 'DATABASE_PATH', default: './data/gateway.db', meaning: 'SQLite file (created with its folder) of the registry, sessions, audit log and traffic rollups; the access log\'s day files go in the folder beside it (`./data/gateway-access-log/`).' },
  { name: 'REDIS_URL', default: undefined, meaning: 'Unset: embedded mode (no Redis needed). Set: sessions, registry, rate limits and access logs go through Redis, one node (`redis://host:6379/0`; `rediss://` for TLS). Or REDIS_SENTINELS, or REDIS_CLUSTER_NODES: one of the three.' },
  { name: 'REDIS_SENTINELS', default: undefined, meaning: 'Redis behind Redis Sentinel: the Sentinels as `host:port` pairs separated by commas (`10.0.0.5:26379,10.0.0.6:26379`); every process finds the primary through them, and again after a failover (see Running a fleet). With REDIS_SENTINEL_NAME.' },
  { name: 'REDIS_SENTINEL_NAME', default: undefined, meaning: 'The group the Sentinels monitor (`sentinel monitor <name> …`), with REDIS_SENTINELS.' },
  { name: 'REDIS_SENTINEL_PASSWORD', default: undefined, meaning: 'The Sentinels\' own password (`requirepass` of the Sentinels), when they have one; never logged.' },
  { name: 'REDIS_CLUSTER_NODES', default: undefined, meaning: 'Redis Cluster: some of its nodes as `host:port` pairs separated by commas (`10.0.0.5:6379,10.0.0.6:6379`); the others are learnt from the cluster, and again after a failover (see Running a fleet).' },
  { name: 'REDIS_USERNAME', default: undefined, meaning: 'ACL user on the Redis data nodes, in every mode (a URL\'s own user wins).' },
  { name: 'REDIS_PASSWORD', default: undefined, meaning: 'Password on the Redis data nodes, in every mode (a URL\'s own password wins); never logged.' },
  { name: 'REDIS_TLS', default: undefined, meaning: '`true`: TLS to the Sentinels and the data nodes (with REDIS_SENTINELS), or to every Cluster node (with REDIS_CLUSTER_NODES). With REDIS_URL, use a `rediss://` URL instead.' },
  { name: 'REDIS_TLS_CA_FILE', default: undefined, meaning: 'PEM file of the CA that signs Redis\'s certificates (else the system\'s CAs), with TLS.' },
  { name: 'REDIS_TLS_CERT_FILE', default: undefined, meaning: 'PEM client certificate for mutual TLS with Redis, with REDIS_TLS_KEY_FILE.' },
  { name: 'REDIS_TLS_KEY_FILE', default: undefined, meaning: 'PEM key of REDIS_TLS_CERT_FILE.' },
  { name: 'OIDC_ISSUER', default: undefined, meaning: 'OpenID Provider issuer URL (discovery at `/.well-known/openid-configuration`). Required.' },
  { name: 'OIDC_CLIENT_ID', default: undefined, meaning: 'Client id registered at the issuer. Required.' },
  { name: 'OIDC_CLIENT_SECRET', default: undefined, meaning: 'Client secret; unset for a public client (PKCE only).' },
  { name: 'OIDC_SCOPES', default: 'openid profile email', meaning: 'Scopes requested at login.' },
  { name: 'OIDC_GROUPS_CLAIM', default: 'groups', meaning: 'Claim that lists the user\'s groups, read from the ID token, else from userinfo; kept with the session for `ADMIN_GROUPS` and services\' access policies.' },
  { name: 'OIDC_API_AUDIENCES', default: '', meaning: 'Comma-separated audiences (`aud`) a machine client\'s bearer JWT from `OIDC_ISSUER` may carry to reach a protected service without a session (see Machine clients); unset: bearer tokens are off.' },
  { name: 'ADMIN_EMAILS', default: '', meaning: 'Comma-separated verified emails that get `isAdmin`.' },
  { name: 'ADMIN_SUBJECTS', default: '', meaning: 'Comma-separated `sub` values that get `isAdmin`.' },
  { name: 'ADMIN_GROUPS', default: '', meaning: 'Comma-separated groups that get `isAdmin`.' },
  { name: 'SESSION_TTL', default: '8h', meaning: 'Absolute session lifetime (`30m`, `8h`, `7d`).' },
  { name: 'SESSION_REVALIDATE', default: '5m', meaning: 'A request on a session not checked at the identity provider for this long starts a refresh there (with the refresh token kept at sign-in), which updates its name, email, groups and admin flag, or ends it when the provider refuses the grant (see What ends a session). Any duration from `1s`.' },
  { name: 'SESSION_REVALIDATE_GRACE', default: '1h', meaning: 'How long a session keeps working while the identity provider cannot be reached for its refresh (down, 5xx, timeouts); then it ends.' },
  { name: 'SESSION_IDLE_TIMEOUT', default: undefined, meaning: 'A session not used for this long ends (`30m`); unset: no idle timeout. Any duration from `1s`.' },
  { name: 'SESSION_ENCRYPTION_KEY', default: undefined, meaning: 'Key that encrypts refresh tokens at rest (AES-256-GCM): 32 random bytes as 64 hex or 43–44 base64 characters (`openssl rand -base64 32`); a key of one repeated byte (all zeros) is refused. Comma-separated to rotate: the first encrypts, every one decrypts. Unset: the admin process makes a key at its first start and keeps it in its database, so sessions are re-checked at the provider all the same; set it to keep the key out of the database, when the database file or its backups may be read by anyone who must not get refresh tokens (see Re-checks at the provider). Needed by the admin process only.' },
  { name: 'RATE_LIMIT_GENERAL', default: '100/15m', meaning: 'Requests per client IP and window; `0` turns it off.' },
  { name: 'RATE_LIMIT_AUTH', default: '5/15m', meaning: 'Login attempts (`GET /auth/login`, failed callbacks) and refused back-channel logouts per client IP; `0` turns it off.' },
  { name: 'RATE_LIMIT_TOKEN', default: '1000/15m', meaning: 'Requests per admin API token (which `RATE_LIMIT_GENERAL` does not count), whatever the address; over it, 429 like the other limits. `0` turns it off.' },
  { name: 'TRUST_PROXY', default: '', meaning: "Comma-separated CIDRs of proxies whose `X-Forwarded-For` is believed (`loopback`, `10.0.0.0/8`); from them, without an `X-Forwarded-For`, `Forwarded`'s `for=` values (RFC 7239). A value that is not an IP address is ignored (see Security notes)." },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'pino level: fatal, error, warn, info, debug, trace, silent.' },
  { name: 'ADMIN_INTERNAL_URL', default: 'http://127.0.0.1:$ADMIN_PORT', meaning: 'Where a proxy process reaches the admin plane (split mode).' },
  { name: 'INTERNAL_PORT', default: '9090', meaning: 'A proxy process\'s health and metrics port (split mode).' },
  { name: 'PROXY_WORKERS', default: '1', meaning: 'Data-plane worker processes of `npm run start:proxy`, sharing PORT (node:cluster).' },
  { name: 'UPSTREAM_TIMEOUT', default: '30s', meaning: 'Wait for an upstream\'s response headers, from the end of the request body, before 504; also the longest pause in a client\'s request body (proxied, or to the gateway\'s own endpoints) before 408.' },
  { name: 'ACCESS_LOG_RETENTION_DAYS', default: '30', meaning: 'Days raw access-log records are kept (whole UTC days, at least 1: a day\'s file is deleted once its last minute is this old); the console\'s traffic rollups are kept 400 days (per minute for 2 days, then per hour).' },
  { name: 'ACCESS_LOG_MAX_SIZE', default: undefined, meaning: 'Most disk the raw access-log records may take (`50GB`, `500MB`, `1TiB`; at least `1MB`): past it the oldest days are deleted. Unset: a fifth of the disk they are on. Whatever the cap, they stop growing when the disk\'s free space falls to 5 % (at most 1 GiB), kept for the registry and sessions.' },
  { name: 'ACCESS_LOG_EXPORT', default: undefined, meaning: '`otlp`: also send every access-log record as an OpenTelemetry log record over OTLP/HTTP (JSON) from the admin process (see Access log export). Unset: SQLite only.' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', default: 'http://localhost:4318', meaning: 'The OpenTelemetry collector\'s OTLP/HTTP base URL; records go to its `/v1/logs` (with `ACCESS_LOG_EXPORT=otlp`), spans to its `/v1/traces` (with `OTEL_TRACES_EXPORTER=otlp`).' },
  { name: 'OTEL_EXPORTER_OTLP_HEADERS', default: '', meaning: 'Headers sent to the collector, `key=value` pairs separated by commas, values percent-encoded (`authorization=Bearer%20…`); never logged.' },
  { name: 'ACCESS_LOG_OTLP_BUFFER_SIZE', default: '64MB', meaning: 'Memory the export may hold while the collector is slow or away (`64MB`, `256MiB`; at least `1MB`; each record counted as twice its text plus 512 bytes): past it the oldest records are dropped from the export (still stored), counted in `gatehouse_access_log_export_dropped_total`.' },
  { name: 'ASSERTION_TTL', default: '5m', meaning: 'Lifetime of the `X-Gatehouse-Assertion` JWT given to upstreams (whole seconds, at least `1s`); a retired signing key stays published for this long plus a minute (twice this long when it is under a minute; see Identity assertion).' },
  { name: 'ASSERTION_KEY_LIFETIME', default: '30d', meaning: 'Age at which the assertion signing key is replaced by a new one by itself (also `POST /api/assertion-keys/rotate`).' },
  { name: 'TRACE_UI_URL', default: undefined, meaning: 'A trace viewer\'s http(s) URL with `{traceId}` where the trace id goes (`https://jaeger.example.com/trace/{traceId}`); the console\'s access log links each traced request there. Unset: no links.' },
  ...TRACING_VARIABLES,
];

/** Thrown by {@link loadConfig}: one line per bad variable, each naming it and what is wrong. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const port = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'must be a port number (0-65535)'),
  v.transform(Number),
  v.maxValue(65535, 'must be a port number (0-65535)'),
);
const httpUrl = v.pipe(
  v.string(),
  v.url('must be an absolute URL'),
  v.transform((text) => new URL(text)),
  v.check((url) => url.protocol === 'http:' || url.protocol === 'https:', 'must be an http: or https: URL'),
);
const duration = v.pipe(
  v.string(),
  v.transform(parseDuration),
  v.number('must be a duration such as 30s, 15m, 8h or 7d'),
);
/** A string read by `parse`, whose thrown message becomes the variable's problem. */
function parsedBy<T>(parse: (text: string) => T) {
  return v.pipe(
    v.string(),
    v.rawTransform<string, T>(({ dataset, addIssue, NEVER }) => {
      try {
        return parse(dataset.value);
      } catch (error) {
        addIssue({ message: (error as Error).message });
        return NEVER;
      }
    }),
  );
}
/** A duration of at least a second (the session checks: tests and demos use seconds). */
const atLeastASecond = v.pipe(duration, v.minValue(1_000, 'must be a duration of at least 1s'));
const wholeSeconds = v.pipe(
  duration,
  v.check((ms) => ms >= 1_000 && ms % 1_000 === 0, 'must be whole seconds, at least 1s'),
);
const rateLimit = v.pipe(
  v.string(),
  v.transform(parseRateLimit),
  v.custom<RateLimit | null>((value) => value !== undefined, 'must be <requests>/<window> such as 100/15m, or 0 to turn it off'),
);
const list = v.pipe(
  v.string(),
  v.transform((text) => text.split(',').map((item) => item.trim()).filter(Boolean)),
);
/** TRUST_PROXY compiled at start, so a bad entry stops the start naming the variable. */
const trustedProxies = v.pipe(
  list,
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return new TrustedProxies(dataset.value);
    } catch {
      addIssue({ message: 'must be addresses, CIDRs or names such as loopback, separated by commas' });
      return NEVER;
    }
  }),
);
const lowerSet = v.pipe(list, v.transform((items) => new Set(items.map((item) => item.toLowerCase()))));
const nonEmpty = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'));
const origin = v.pipe(httpUrl, v.check((url) => url.pathname === '/' && !url.search && !url.hash, 'must be an origin without path, query or fragment'));
/** TRACE_UI_URL: kept as written (URL parsing would escape the braces); an http(s) URL once a trace id fills it. */
const traceUiUrl = v.pipe(
  v.string(),
  v.includes('{traceId}', 'must contain {traceId}, where the trace id goes'),
  v.check((text) => URL.canParse(text.replaceAll('{traceId}', '0'.repeat(32))) && /^https?:/i.test(text), 'must be an http: or https: URL'),
);

const schema = v.object({
  PORT: port,
  ADMIN_PORT: port,
  PUBLIC_URL: origin,
  ADMIN_URL: v.optional(origin),
  ADMIN_HOST: nonEmpty,
  TLS_CERT_FILE: v.optional(nonEmpty),
  TLS_KEY_FILE: v.optional(nonEmpty),
  TLS_CERTS_DIR: v.optional(nonEmpty),
  ADMIN_TLS_CERT_FILE: v.optional(nonEmpty),
  ADMIN_TLS_KEY_FILE: v.optional(nonEmpty),
  HTTP_PORT: v.optional(port),
  HSTS: nonEmpty,
  H2C: v.picklist(['true', 'false'], 'must be true or false'),
  ACME_EMAIL: v.optional(nonEmpty),
  ACME_DIRECTORY_URL: nonEmpty,
  ACME_CA_FILE: v.optional(nonEmpty),
  DATABASE_PATH: nonEmpty,
  REDIS_URL: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL'))),
  REDIS_SENTINELS: v.optional(nonEmpty),
  REDIS_SENTINEL_NAME: v.optional(nonEmpty),
  REDIS_SENTINEL_PASSWORD: v.optional(nonEmpty),
  REDIS_CLUSTER_NODES: v.optional(nonEmpty),
  REDIS_USERNAME: v.optional(nonEmpty),
  REDIS_PASSWORD: v.optional(nonEmpty),
  REDIS_TLS: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
  REDIS_TLS_CA_FILE: v.optional(nonEmpty),
  REDIS_TLS_CERT_FILE: v.optional(nonEmpty),
  REDIS_TLS_KEY_FILE: v.optional(nonEmpty),
  OIDC_ISSUER: v.optional(httpUrl),
  OIDC_CLIENT_ID: v.optional(nonEmpty),
  OIDC_CLIENT_SECRET: v.optional(nonEmpty),
  OIDC_SCOPES: v.pipe(nonEmpty, v.check((scopes) => scopes.split(/\s+/).includes('openid'), 'must include openid')),
  OIDC_GROUPS_CLAIM: nonEmpty,
  OIDC_API_AUDIENCES: list,
  ADMIN_EMAILS: lowerSet,
  ADMIN_SUBJECTS: list,
  ADMIN_GROUPS: list,
  SESSION_TTL: duration,
  SESSION_REVALIDATE: atLeastASecond,
  SESSION_REVALIDATE_GRACE: atLeastASecond,
  SESSION_IDLE_TIMEOUT: v.optional(atLeastASecond),
  SESSION_ENCRYPTION_KEY: v.optional(parsedBy(parseEncryptionKeys)),
  RATE_LIMIT_GENERAL: rateLimit,
  RATE_LIMIT_AUTH: rateLimit,
  RATE_LIMIT_TOKEN: rateLimit,
  TRUST_PROXY: trustedProxies,
  LOG_LEVEL: v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'must be one of fatal, error, warn, info, debug, trace, silent'),
  ADMIN_INTERNAL_URL: httpUrl,
  INTERNAL_PORT: port,
  PROXY_WORKERS: v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number from 1 to 64'), v.transform(Number), v.minValue(1, 'must be a whole number from 1 to 64'), v.maxValue(64, 'must be a whole number from 1 to 64')),
  UPSTREAM_TIMEOUT: duration,
  ACCESS_LOG_RETENTION_DAYS: v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number of days (1 or more)'),
    v.transform(Number),
    v.minValue(1, 'must be a whole number of days (1 or more)'),
  ),
  ACCESS_LOG_MAX_SIZE: v.optional(
    v.pipe(
      v.string(),
      v.transform(parseByteSize),
      v.number('must be a size such as 50GB, 500MB or 1TiB'),
      v.minValue(1e6, 'must be at least 1MB'),
    ),
  ),
  ACCESS_LOG_EXPORT: v.optional(v.picklist(['otlp'], 'must be otlp, or unset')),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
  OTEL_EXPORTER_OTLP_HEADERS: parsedBy(parseOtlpHeaders),
  ACCESS_LOG_OTLP_BUFFER_SIZE: v.pipe(v.string(), v.transform(parseByteSize), v.number('must be a size such as 64MB or 256MiB'), v.minValue(1e6, 'must be at least 1MB')),
  ASSERTION_TTL: wholeSeconds,
  ASSERTION_KEY_LIFETIME: duration,
  TRACE_UI_URL: v.optional(traceUiUrl),
});

/**
 * Reads and validates the configuration from `env` (default `process.env`); empty strings count as
 * unset. Every problem is collected, so one start reports them all.
 * @throws {ConfigError} one line per bad variable: `<NAME>: <what is wrong>`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const input: Record<string, string> = {};
  for (const { name, default: fallback } of VARIABLES) {
    const value = env[name]?.trim() ? env[name]!.trim() : fallback;
    if (value !== undefined) input[name] = value;
  }
  input.ADMIN_INTERNAL_URL = input.ADMIN_INTERNAL_URL!.replace('$ADMIN_PORT', input.ADMIN_PORT ?? '');
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (!result.success) {
    throw new ConfigError(result.issues.map((issue) => `${v.getDotPath(issue) ?? 'config'}: ${issue.message}`));
  }
  const out = result.output;
  const redisProblems: string[] = [];
  const redis = readRedisTarget(out, redisProblems);
  if (redisProblems.length > 0) throw new ConfigError(redisProblems);
  const problems: string[] = [];
  const tls = readTlsSettings(out, problems);
  const tracing = readTracingSettings(input, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  if (out.ADMIN_URL?.origin === out.PUBLIC_URL.origin) {
    throw new ConfigError(['ADMIN_URL: must be another origin than PUBLIC_URL (unset it to serve the console on PUBLIC_URL)']);
  }
  // Every process that checks bearer tokens needs the issuer, a split-mode proxy too (design.md §4.7).
  if (out.OIDC_API_AUDIENCES.length > 0 && !out.OIDC_ISSUER) {
    throw new ConfigError(['OIDC_API_AUDIENCES: needs OIDC_ISSUER, the identity provider whose tokens are accepted']);
  }
  return {
    port: out.PORT,
    adminPort: out.ADMIN_PORT,
    publicUrl: out.PUBLIC_URL,
    adminUrl: out.ADMIN_URL,
    adminHost: out.ADMIN_HOST,
    tls,
    h2c: out.H2C === 'true',
    databasePath: out.DATABASE_PATH,
    redisUrl: out.REDIS_URL,
    redis,
    oidc: {
      issuer: out.OIDC_ISSUER,
      clientId: out.OIDC_CLIENT_ID,
      clientSecret: out.OIDC_CLIENT_SECRET,
      scopes: out.OIDC_SCOPES,
      groupsClaim: out.OIDC_GROUPS_CLAIM,
      apiAudiences: out.OIDC_API_AUDIENCES,
    },
    admins: { emails: out.ADMIN_EMAILS, subjects: new Set(out.ADMIN_SUBJECTS), groups: new Set(out.ADMIN_GROUPS) },
    sessionTtlMs: out.SESSION_TTL,
    sessionChecks: { revalidateMs: out.SESSION_REVALIDATE, graceMs: out.SESSION_REVALIDATE_GRACE, idleTimeoutMs: out.SESSION_IDLE_TIMEOUT },
    sessionEncryptionKeys: out.SESSION_ENCRYPTION_KEY ?? [],
    rateLimitGeneral: out.RATE_LIMIT_GENERAL,
    rateLimitAuth: out.RATE_LIMIT_AUTH,
    rateLimitToken: out.RATE_LIMIT_TOKEN,
    trustProxy: out.TRUST_PROXY,
    logLevel: out.LOG_LEVEL,
    adminInternalUrl: out.ADMIN_INTERNAL_URL,
    internalPort: out.INTERNAL_PORT,
    proxyWorkers: out.PROXY_WORKERS,
    upstreamTimeoutMs: out.UPSTREAM_TIMEOUT,
    accessLogRetentionDays: out.ACCESS_LOG_RETENTION_DAYS,
    accessLogMaxBytes: out.ACCESS_LOG_MAX_SIZE,
    accessLogExport: out.ACCESS_LOG_EXPORT === 'otlp' ? { url: otlpLogsUrl({ endpoint: out.OTEL_EXPORTER_OTLP_ENDPOINT.href }), headers: out.OTEL_EXPORTER_OTLP_HEADERS, bufferBytes: out.ACCESS_LOG_OTLP_BUFFER_SIZE } : undefined,
    traceUiUrl: out.TRACE_UI_URL,
    assertionTtlMs: out.ASSERTION_TTL,
    assertionKeyLifetimeMs: out.ASSERTION_KEY_LIFETIME,
    tracing,
  };
}
