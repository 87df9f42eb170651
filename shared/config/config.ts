import * as v from 'valibot';
import { parseByteSize } from './byte-size.js';
import { parseDuration, parseRateLimit, type RateLimit } from './durations.js';
import { otlpLogsUrl, parseOtlpHeaders } from './otlp-headers.js';
import { parseEncryptionKeys } from '../identity/token-encryption.js';
import { readRedisTarget, type RedisTarget } from './redis-target.js';
import { readTlsSettings, type TlsSettings } from './tls-settings.js';
import { readTracingSettings, type TracingSettings } from './tracing-settings.js';
import { VARIABLES } from './variables.js';
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
     * FORWARD_GROUPS=true: a caller's groups go to targets, and in the verify endpoint's answer, as
     * `X-Forwarded-Groups` (request-headers.ts `pushIdentityFields`); off, only the identity
     * assertion carries them.
     */
    forwardGroups: boolean;
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
  FORWARD_GROUPS: v.picklist(['true', 'false'], 'must be true or false'),
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
      forwardGroups: out.FORWARD_GROUPS === 'true',
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
