import * as v from 'valibot';
import { GatewayError } from '../../shared/errors.js';

/**
 * What every admin API body validation shares (design.md §5 "other validation errors", "unknown
 * body fields"): the body must be a JSON object, and every problem is reported at once, as
 * `{ "error": "<label>: <field> <why>; …. Unknown fields: …", "fields": { "<field>": "<why>" } }`.
 */

/** The message of a body that is no JSON object (an array, null, a string, a number). */
export const NOT_AN_OBJECT = 'Body must be a JSON object';

/**
 * `body` as an object.
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object` for arrays, null and primitives.
 */
export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('BAD_REQUEST', { message: NOT_AN_OBJECT });
  }
  return body as Record<string, unknown>;
}

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, undefined>;

/**
 * Runs `schema` over the known fields of `object` and reports every problem at once: the first
 * failing rule of each known field (a missing required one reads `is required`), and each field
 * the schema does not know (minus `ignored`, which are dropped).
 * @throws {GatewayError} BAD_REQUEST with `fields`, its message starting with `label`.
 */
export function parseWith<S extends ObjectSchema>(
  schema: S,
  object: Record<string, unknown>,
  label: string,
  ignored: readonly string[],
): v.InferOutput<S> {
  const known = Object.keys(schema.entries);
  const unknown = Object.keys(object).filter((key) => !known.includes(key) && !ignored.includes(key));
  const input = Object.fromEntries(Object.entries(object).filter(([key]) => known.includes(key)));
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  const invalid = result.success ? {} : fieldReasons(result.issues);
  if (unknown.length > 0 || !result.success) throw validationError(label, invalid, unknown);
  return result.output;
}

/**
 * The first reason per field. A field is named by its object keys joined with `.`
 * (`access.emailDomains`; a list's entries are reported on the list). A key missing from an
 * object reads `is required`, a key a strict object does not know `unknown field`.
 */
function fieldReasons(issues: readonly v.BaseIssue<unknown>[]): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const issue of issues) {
    const steps = issue.path ?? [];
    const depth = steps.findIndex((step) => step.type !== 'object');
    const keys = (depth === -1 ? steps : steps.slice(0, depth)).map((step) => String(step.key));
    const last = steps[keys.length - 1];
    const field = keys.length > 0 ? keys.join('.') : 'body';
    const keyReason = issue.expected === 'never' ? 'unknown field' : 'is required';
    reasons[field] ??= last?.origin === 'key' ? keyReason : issue.message;
  }
  return reasons;
}

/**
 * The error for a body with `invalid` fields (field → reason) and `unknown` ones, as
 * {@link parseWith} reports them; for checks across fields made after it.
 */
export function validationError(label: string, invalid: Record<string, string>, unknown: string[]): GatewayError {
  const parts: string[] = [];
  const invalidEntries = Object.entries(invalid);
  if (invalidEntries.length > 0) parts.push(`${label}: ${invalidEntries.map(([f, why]) => `${f} ${why}`).join('; ')}`);
  if (unknown.length > 0) parts.push(`Unknown fields: ${unknown.join(', ')}`);
  const fields = { ...invalid, ...Object.fromEntries(unknown.map((key) => [key, 'unknown field'])) };
  return new GatewayError('BAD_REQUEST', { message: parts.join('. '), fields });
}
