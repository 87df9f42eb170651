import { GatewayError } from '../../shared/errors.js';

/**
 * `If-Match` on the admin API's writes of one service (design.md §4.9, RFC 9110 §13.1.1): `null`
 * when the request has none (no condition), `'*'` for any current representation, or the strong
 * entity tags the field lists, quotes included (`"3"`). Weak tags (`W/"3"`) are dropped while
 * reading: If-Match compares strongly, so they never match.
 */
export type IfMatch = null | '*' | readonly string[];

/**
 * One element of the field's list (RFC 9110 §5.6.1, §8.8.3): optional whitespace, an entity tag or
 * nothing (empty elements are allowed), optional whitespace, then a comma or the end. `etagc` is
 * `!`, `#`–`~` or obs-text (Node reads header values as latin1), so a tag may hold a comma.
 */
const LIST_ELEMENT = /[\t ]*(?:(W\/)?("[\x21\x23-\x7e\x80-\xff]*"))?[\t ]*(?:,|$)/y;

const invalid = () => new GatewayError('BAD_REQUEST', { message: 'If-Match must be * or a list of entity tags, such as "3"' });

/**
 * Reads an `If-Match` field value (Node joins repeated fields with `, `, which is the same list).
 * @throws {GatewayError} BAD_REQUEST (400) for a value that is neither `*` nor a list of at least
 *   one entity tag (an unquoted `3`, say): a client meaning a condition gets told, not ignored.
 */
export function parseIfMatch(value: string | undefined): IfMatch {
  if (value === undefined) return null;
  if (value.trim() === '*') return '*';
  const strong: string[] = [];
  let tags = 0;
  for (let at = 0; at < value.length; at = LIST_ELEMENT.lastIndex) {
    LIST_ELEMENT.lastIndex = at;
    const element = LIST_ELEMENT.exec(value);
    if (!element || element[0] === '') throw invalid();
    if (element[2] === undefined) continue;
    tags++;
    if (element[1] === undefined) strong.push(element[2]);
  }
  if (tags === 0) throw invalid();
  return strong;
}

/**
 * Whether `condition` holds for a resource that exists with `etag` (RFC 9110 §13.1.1: `*` holds
 * for any current representation, a list when one of its tags is `etag`, compared strongly).
 * A missing resource is the caller's 404 first (RFC 9110 §13.2.1).
 */
export function ifMatchHolds(condition: IfMatch, etag: string): boolean {
  return condition === null || condition === '*' || condition.includes(etag);
}
