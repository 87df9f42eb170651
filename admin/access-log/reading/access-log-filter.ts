import * as v from 'valibot';
import { normalizeHost } from '../../../shared/services/host-names.js';
import { atMostChars } from '../../http/char-length.js';
import { readPage, type Page } from '../../http/pagination.js';
import { rejectWrongParameters, type QueryFields } from '../../http/query-errors.js';

/** Filters of a service's access log (`GET /api/services/:id/logs` query parameters). */
export interface AccessLogFilter {
  /** 2 for 2xx … 5xx: `status_code / 100`. */
  statusClass?: number;
  /** Upper-cased HTTP method, matched exactly. */
  method?: string;
  /** Substring of the requested path (with its query), case-sensitive. */
  pathContains?: string;
  /** The service host the request was routed by, in its normal form (shared/services/host-names.ts), matched exactly. */
  host?: string;
  /** The user's subject (`user_id`), matched exactly. */
  userId?: string;
  /** The request's id (`request_id`, design.md §3.10), matched exactly. */
  requestId?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

/** The query parameters {@link readAccessLogFilter} reads, in the order the README lists them. */
export const FILTER_PARAMETERS = ['status', 'method', 'path', 'host', 'user', 'requestId', 'from', 'to'] as const;

type FilterParameter = (typeof FILTER_PARAMETERS)[number];

/** A status class; the `x`s in either case. */
const STATUS = /^[2-5][xX][xX]$/;
/** RFC 9110 §5.6.2 token (methods are tokens, §9.1). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A calendar date, or a date-time with seconds optional and a zone required (Z or ±hh:mm); `T` and `Z` in either case. */
const ISO_8601 = /^\d{4}-\d\d-\d\d(?:[Tt]\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d\d:\d\d))?$/;
const MAX_METHOD = 32;
const MAX_PATH = 2048;
const MAX_USER = 255;
/** A request id as the gateway takes one (design.md §3.10): 1 to 128 visible ASCII characters. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

const RULES = {
  status: 'must be one of 2xx, 3xx, 4xx, 5xx',
  method: `must be an HTTP method (a token of at most ${MAX_METHOD} characters, such as GET)`,
  path: `must be at most ${MAX_PATH} characters`,
  host: 'must be a host name, such as app.example.com (no port, no wildcard)',
  user: `must be at most ${MAX_USER} characters`,
  requestId: 'must be a request id: 1 to 128 visible ASCII characters, such as 4bf92f3577b34da6',
  from: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z',
  to: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z',
  order: 'must be after from',
};

/** `from` or `to`: an instant of the accepted form that exists (no 2025-02-30). */
const instant = (description: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(ISO_8601),
      v.check((text) => instantMs(text) !== undefined),
      v.description(`${description}: an ISO 8601 date-time with a time zone (2025-01-31T09:00:00Z, …+01:00) or a date (midnight UTC)`),
    ),
  );

/**
 * The filters' values: what {@link readAccessLogFilter} checks (each wrong one is reported with its
 * rule from `RULES`), and what the API's description (admin/openapi/) converts.
 */
export const FILTER_PARAMETER_SCHEMAS = {
  status: v.optional(v.pipe(v.string(), v.regex(STATUS), v.description('A status class: 2xx, 3xx, 4xx or 5xx'))),
  method: v.optional(v.pipe(v.string(), v.regex(TOKEN), v.maxLength(MAX_METHOD), v.description('The HTTP method, case-insensitively'))),
  path: v.optional(
    v.pipe(v.string(), ...atMostChars(MAX_PATH, RULES.path), v.description('Records whose path (with its query) contains this text, case-sensitively')),
  ),
  host: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => normalizeHost(text) !== undefined),
      v.description('Records of requests routed by this service host (a name, no port), in any case; a U-label matches its A-label'),
    ),
  ),
  user: v.optional(v.pipe(v.string(), ...atMostChars(MAX_USER, RULES.user), v.description("The user's subject (user_id), exactly"))),
  requestId: v.optional(
    v.pipe(v.string(), v.regex(REQUEST_ID), v.description("The request's id (request_id, the X-Request-Id its answer carried), exactly")),
  ),
  from: instant('Records from this instant on (inclusive)'),
  to: instant('Records before this instant (exclusive), after from'),
} satisfies Record<FilterParameter, v.GenericSchema<string | undefined>>;

/**
 * A page of a service's access log and its filters, from `GET /api/services/:id/logs`'s query:
 * every wrong parameter, paging or filter, is named at once (design.md §5).
 * @throws {GatewayError} BAD_REQUEST with `fields` naming each wrong parameter.
 */
export function parseAccessLogQuery(query: URLSearchParams, defaultLimit?: number): { page: Page; filter: AccessLogFilter } {
  const fields: QueryFields = {};
  const page = readPage(query, fields, defaultLimit);
  const filter = readAccessLogFilter(query, fields);
  rejectWrongParameters(fields);
  return { page, filter };
}

/**
 * Reads the access-log filters from a query string; absent and empty parameters do not filter.
 * `status` is a class (`2xx`…`5xx`), `method` a token (compared upper-cased), `path` a substring of
 * the requested path, `host` a host name (read as host-names.ts `normalizeHost` reads a
 * request's), `user` a subject, `requestId` a request id (compared exactly), `from` (inclusive)
 * and `to` (exclusive) ISO 8601 instants (a bare date is midnight UTC). Each wrong one is recorded in `fields` with its rule, e.g.
 * `{ status: 'must be one of 2xx, 3xx, 4xx, 5xx' }` (the filter returned is then incomplete).
 */
function readAccessLogFilter(query: URLSearchParams, fields: QueryFields): AccessLogFilter {
  /** The parameter's value when present, not empty and valid; a wrong one is recorded in `fields`. */
  const read = (name: FilterParameter): string | undefined => {
    const text = query.get(name) || undefined;
    if (text === undefined || v.is(FILTER_PARAMETER_SCHEMAS[name], text)) return text;
    fields[name] = RULES[name];
    return undefined;
  };
  const filter: AccessLogFilter = {};
  const status = read('status');
  if (status !== undefined) filter.statusClass = Number(status[0]);
  const method = read('method');
  if (method !== undefined) filter.method = method.toUpperCase();
  const path = read('path');
  if (path !== undefined) filter.pathContains = path;
  const host = read('host');
  if (host !== undefined) filter.host = normalizeHost(host);
  const user = read('user');
  if (user !== undefined) filter.userId = user;
  const requestId = read('requestId');
  if (requestId !== undefined) filter.requestId = requestId;
  for (const name of ['from', 'to'] as const) {
    const text = read(name);
    if (text !== undefined) filter[name] = instantMs(text);
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) fields.to = RULES.order;
  return filter;
}

/** Epoch ms of an ISO 8601 instant of the accepted form, or undefined (for 2025-02-30, say). */
function instantMs(text: string): number | undefined {
  const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2025-02-30 over to March; the date part must survive the round trip.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const check = new Date(Date.UTC(year!, month! - 1, day!));
  return check.getUTCDate() === day && check.getUTCMonth() === month! - 1 ? ms : undefined;
}
