import { readPage, type Page } from './pagination.js';
import { rejectWrongParameters, type QueryFields } from './query-errors.js';

/** Filters of a service's access log (`GET /api/services/:id/logs` query parameters). */
export interface AccessLogFilter {
  /** 2 for 2xx … 5xx: `status_code / 100`. */
  statusClass?: number;
  /** Upper-cased HTTP method, matched exactly. */
  method?: string;
  /** Substring of the requested path (with its query), case-sensitive. */
  pathContains?: string;
  /** The user's subject (`user_id`), matched exactly. */
  userId?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

/** The query parameters {@link parseAccessLogFilter} reads, in the order the README lists them. */
export const FILTER_PARAMETERS = ['status', 'method', 'path', 'user', 'from', 'to'] as const;

const STATUS = /^([2-5])xx$/i;
/** RFC 9110 §5.6.2 token (methods are tokens, §9.1). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A calendar date, or a date-time with seconds optional and a zone required (Z or ±hh:mm). */
const ISO_8601 = /^\d{4}-\d\d-\d\d(?:T\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:\d\d))?$/i;
const MAX_METHOD = 32;
const MAX_PATH = 2048;
const MAX_USER = 255;

const RULES = {
  status: 'must be one of 2xx, 3xx, 4xx, 5xx',
  method: `must be an HTTP method (a token of at most ${MAX_METHOD} characters, such as GET)`,
  path: `must be at most ${MAX_PATH} characters`,
  user: `must be at most ${MAX_USER} characters`,
  from: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z',
  to: 'must be an ISO 8601 date-time with a time zone, such as 2025-01-31T09:00:00Z',
  order: 'must be after from',
};

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
 * the requested path, `user` a subject, `from` (inclusive) and `to` (exclusive) ISO 8601 instants
 * (a bare date is midnight UTC). Each wrong one is recorded in `fields` with its rule, e.g.
 * `{ status: 'must be one of 2xx, 3xx, 4xx, 5xx' }` (the filter returned is then incomplete).
 */
function readAccessLogFilter(query: URLSearchParams, fields: QueryFields): AccessLogFilter {
  const read = (name: (typeof FILTER_PARAMETERS)[number]) => query.get(name) || undefined;
  const filter: AccessLogFilter = {};

  const status = read('status');
  if (status !== undefined) {
    const match = STATUS.exec(status);
    if (match) filter.statusClass = Number(match[1]);
    else fields.status = RULES.status;
  }
  const method = read('method');
  if (method !== undefined) {
    if (TOKEN.test(method) && method.length <= MAX_METHOD) filter.method = method.toUpperCase();
    else fields.method = RULES.method;
  }
  const path = read('path');
  if (path !== undefined) {
    if ([...path].length <= MAX_PATH) filter.pathContains = path;
    else fields.path = RULES.path;
  }
  const user = read('user');
  if (user !== undefined) {
    if ([...user].length <= MAX_USER) filter.userId = user;
    else fields.user = RULES.user;
  }
  for (const name of ['from', 'to'] as const) {
    const text = read(name);
    if (text === undefined) continue;
    const ms = parseInstant(text);
    if (ms === undefined) fields[name] = RULES[name];
    else filter[name] = ms;
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) fields.to = RULES.order;
  return filter;
}

/** Epoch ms of an ISO 8601 instant in the accepted forms, or undefined (also for 2025-02-30). */
function parseInstant(text: string): number | undefined {
  if (!ISO_8601.test(text)) return undefined;
  const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2025-02-30 over to March; the date part must survive the round trip.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const check = new Date(Date.UTC(year!, month! - 1, day!));
  return check.getUTCDate() === day && check.getUTCMonth() === month! - 1 ? ms : undefined;
}
