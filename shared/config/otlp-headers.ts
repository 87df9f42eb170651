/**
 * Reading the standard OTLP exporter variables that say where the access-log export goes and with
 * which headers (OpenTelemetry specification, protocol/exporter.md: "Configuration Options",
 * "Endpoint URLs for OTLP/HTTP", "Specifying headers via environment variables").
 */

/** The OTLP/HTTP default endpoint (exporter.md: port 4318, plain http on this machine). */
const DEFAULT_ENDPOINT = 'http://localhost:4318';

/** RFC 9110 §5.6.2 `token`: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * What a decoded header value may hold: visible ASCII, space and tab (RFC 9110 §5.5, without
 * obs-text). Checked here because a value undici refuses would fail every export at send time,
 * where it would look like an unreachable collector and be retried forever.
 */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Parses `OTEL_EXPORTER_OTLP_HEADERS`: comma-separated `key=value` pairs in the W3C Baggage format
 * without its `;` metadata (exporter.md), for example `api-key=abc,x-tenant=acme%20corp`. Blanks
 * around keys, values and commas are ignored, and so are empty items (a trailing comma). A value is
 * everything after the first `=` up to the next comma, percent-decoded (`%2C` for a comma, `%20`
 * for a space; `authorization=Basic dXNlcjpwYXNz==` keeps its own `=`); `+` stays a plus.
 * @returns header names, lowercased (HTTP names are case-insensitive; a later pair wins over an
 *   earlier one of the same name), to their values.
 * @throws {Error} naming the malformed pair's position (never its value, which may be an API key):
 *   no `=`, a name that is not an HTTP token, a bad `%` escape, or a control character once decoded.
 *   The message has no variable name: the config loader prefixes `OTEL_EXPORTER_OTLP_HEADERS: `.
 */
export function parseOtlpHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const items = text.split(',');
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!.trim();
    if (item === '') continue;
    const equals = item.indexOf('=');
    const key = equals === -1 ? '' : item.slice(0, equals).trim();
    if (!TOKEN.test(key)) {
      throw new Error(`item ${i + 1} must be name=value with a name made of letters, digits and !#$%&'*+-.^_\`|~`);
    }
    headers[key.toLowerCase()] = decodeValue(item.slice(equals + 1).trim(), key, i + 1);
  }
  return headers;
}

/** Percent-decodes header `key`'s value (item `position`), which must then be a valid HTTP field value. */
function decodeValue(raw: string, key: string, position: number): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw new Error(`item ${position} (${key}): bad percent-encoding (write % as %25)`);
  }
  if (!FIELD_VALUE.test(value)) throw new Error(`item ${position} (${key}): the decoded value holds a control or non-ASCII character`);
  return value;
}

/**
 * Where access-log records are POSTed (exporter.md "Endpoint URLs for OTLP/HTTP"):
 * `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` as is (a URL without a path gets `/`), else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/logs` appended to its path with exactly one slash
 * (`http://c:4318/otlp/` → `http://c:4318/otlp/v1/logs`), else `http://localhost:4318/v1/logs`.
 * An empty value counts as unset (the specification's rule for every SDK variable).
 * @param env the two variables' raw texts, as `process.env` gives them.
 * @throws {Error} `<VARIABLE>: must be an absolute URL` or `<VARIABLE>: must be an http: or https:
 *   URL`, the variable named (unlike {@link parseOtlpHeaders}) since either may be at fault.
 */
export function otlpLogsUrl(env: { endpoint?: string; logsEndpoint?: string }): URL {
  return otlpSignalUrl('logs', env.endpoint, env.logsEndpoint);
}

/**
 * Where one signal's batches are POSTed, by the rule {@link otlpLogsUrl} gives for logs:
 * `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT` (`signalEndpoint`) as is, else `endpoint` with
 * `/v1/<signal>` appended, else `http://localhost:4318/v1/<signal>`.
 * @throws {Error} as {@link otlpLogsUrl}, naming the variable at fault.
 */
export function otlpSignalUrl(signal: 'logs' | 'traces', endpoint: string | undefined, signalEndpoint: string | undefined): URL {
  if (signalEndpoint) return httpUrl(signalEndpoint, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`);
  const url = httpUrl(endpoint || DEFAULT_ENDPOINT, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/${signal}`;
  return url;
}

/** `text` as an http: or https: URL, or an error naming `variable`. */
function httpUrl(text: string, variable: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`${variable}: must be an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${variable}: must be an http: or https: URL`);
  return url;
}
