import { GatewayError } from '../../shared/errors.js';

/** Query parameters found wrong so far: parameter name → the rule it breaks. */
export type QueryFields = Record<string, string>;

/**
 * Refuses a query with every wrong parameter named at once (design.md §5 `{ error, fields }`): the
 * message lists `<name> <rule>` for each, joined by `; `.
 * @throws {GatewayError} BAD_REQUEST when `fields` names any parameter.
 */
export function rejectWrongParameters(fields: QueryFields): void {
  if (Object.keys(fields).length === 0) return;
  const message = Object.entries(fields).map(([name, rule]) => `${name} ${rule}`).join('; ');
  throw new GatewayError('BAD_REQUEST', { message, fields });
}
