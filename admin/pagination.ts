import { GatewayError } from '../shared/errors.js';

/** Default and largest page size of log lists (spec §8, DESIGN §5). */
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
 * Reads `limit` (integer 1–1000, default `defaultLimit`, 100 unless given) and `offset` (integer ≥ 0, default 0) from a query
 * string (spec §4.2/§4.3, DESIGN §5). Only plain decimal digits count: `1.5`, `1e3`, `+1`, `abc`
 * and an empty value are rejected.
 * @throws {GatewayError} BAD_REQUEST naming each bad parameter, e.g. message
 *   `limit must be an integer from 1 to 1000`, fields `{ limit: 'must be an integer from 1 to 1000' }`.
 */
export function parsePagination(query: URLSearchParams, defaultLimit = DEFAULT_LIMIT): Page {
  const limit = readInteger(query.get('limit'), defaultLimit);
  const offset = readInteger(query.get('offset'), 0);
  const fields: Record<string, string> = {};
  if (limit === undefined || limit < 1 || limit > MAX_LIMIT) fields.limit = LIMIT_RULE;
  if (offset === undefined) fields.offset = OFFSET_RULE;
  if (Object.keys(fields).length > 0) {
    const message = Object.entries(fields).map(([name, rule]) => `${name} ${rule}`).join('; ');
    throw new GatewayError('BAD_REQUEST', { message, fields });
  }
  return { limit: limit!, offset: offset! };
}

/** `fallback` when absent; the value when it is a safe non-negative integer; else undefined. */
function readInteger(text: string | null, fallback: number): number | undefined {
  if (text === null) return fallback;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
