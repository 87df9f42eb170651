import * as v from 'valibot';
import { rejectWrongParameters, type QueryFields } from './query-errors.js';

/** Default and largest page size of log lists (interface.md §8, design.md §5). */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** One page of a log list: `limit` records after skipping `offset`. */
export interface Page {
  limit: number;
  offset: number;
}

const LIMIT_RULE = `must be an integer from 1 to ${MAX_LIMIT}`;
const OFFSET_RULE = 'must be an integer of 0 or more';

/**
 * `limit` and `offset` once read as integers: what {@link readPage} checks, and what the API's
 * description (admin/openapi/) converts, with the API's defaults.
 */
export const PAGE_PARAMETERS = {
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_LIMIT), v.description('Records per page')), DEFAULT_LIMIT),
  offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Records to skip, newest first')), 0),
};

/**
 * Reads `limit` (integer 1–1000, default `defaultLimit`, 100 unless given) and `offset` (integer ≥ 0, default 0) from a query
 * string (interface.md §4.2/§4.3, design.md §5). Only plain decimal digits count: `1.5`, `1e3`, `+1`, `abc`
 * and an empty value are rejected.
 * @throws {GatewayError} BAD_REQUEST naming each bad parameter, e.g. message
 *   `limit must be an integer from 1 to 1000`, fields `{ limit: 'must be an integer from 1 to 1000' }`.
 */
export function parsePagination(query: URLSearchParams, defaultLimit = DEFAULT_LIMIT): Page {
  const fields: QueryFields = {};
  const page = readPage(query, fields, defaultLimit);
  rejectWrongParameters(fields);
  return page;
}

/**
 * {@link parsePagination} for a query with other parameters too: records a wrong `limit` or
 * `offset` in `fields` instead of throwing (the page it returns is then meaningless).
 */
export function readPage(query: URLSearchParams, fields: QueryFields, defaultLimit = DEFAULT_LIMIT): Page {
  const limit = readInteger(query.get('limit'), defaultLimit);
  const offset = readInteger(query.get('offset'), 0);
  if (limit === undefined || !v.is(PAGE_PARAMETERS.limit, limit)) fields.limit = LIMIT_RULE;
  if (offset === undefined || !v.is(PAGE_PARAMETERS.offset, offset)) fields.offset = OFFSET_RULE;
  return { limit: limit ?? defaultLimit, offset: offset ?? 0 };
}

/** `fallback` when absent; the value when it is a safe non-negative integer; else undefined. */
function readInteger(text: string | null, fallback: number): number | undefined {
  if (text === null) return fallback;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
