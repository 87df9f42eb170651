import * as v from 'valibot';
import { ACR_VALUE, MAX_ACR_VALUES, MAX_STEP_UP_AGE_S } from '../../shared/identity/step-up.js';
import { validationError } from '../http/json-body-validation.js';
import { got } from './service-fields.js';

/**
 * The step-up fields (design.md §4.18, limits in §5), `maxAge` and `acr`, of a service and of a
 * `require` rule: valibot schemas for the bodies' schemas (service-validation.ts, rule-fields.ts).
 * `named` prefixes each message with the field's name, for a rule's, which are reported on `rules`.
 */

/** `maxAge`: whole seconds, 0 to a year. */
export function maxAgeSchema(named: string) {
  return v.pipe(
    v.number(`${named}must be a number of seconds`),
    v.integer(`${named}must be a whole number of seconds`),
    v.minValue(0, `${named}must be at least 0`),
    v.maxValue(MAX_STEP_UP_AGE_S, `${named}must be at most ${MAX_STEP_UP_AGE_S} (a year)`),
    v.description('Step-up: the sign-in must be at most this many seconds old (0: a new sign-in, asked with prompt=login); a minute of leeway'),
  );
}

/** `acr`: 1–8 accepted values, each kept once. */
export function acrSchema(named: string) {
  return v.pipe(
    v.array(
      v.pipe(
        v.string(`${named}must contain only strings`),
        v.check((value) => ACR_VALUE.test(value), (issue) => `${named}values must be 1-200 visible ASCII characters without " , \\ or space ${got(issue)}`),
      ),
      `${named}must be a list of acr values`,
    ),
    v.minLength(1, `${named}must not be empty (leave it out, or null, for any)`),
    v.maxLength(MAX_ACR_VALUES, `${named}must have at most ${MAX_ACR_VALUES} values`),
    v.description("Step-up: the sign-in's acr (the ID token's, a bearer token's) must be one of these"),
    v.transform((values): string[] => [...new Set(values)]),
  );
}

/** A service's step-up fields as a create body and a registry document's entry take them: null when absent. */
export const stepUpEntries = {
  maxAge: v.optional(v.nullable(maxAgeSchema('')), null),
  acr: v.optional(v.nullable(acrSchema('')), null),
};

/** A service's step-up fields as a PUT body takes them: each optional, no default. */
export const stepUpPatchEntries = {
  maxAge: v.optional(v.nullable(maxAgeSchema(''))),
  acr: v.optional(v.nullable(acrSchema(''))),
};

/**
 * A service's step-up applies to signed-in callers, so it needs `requireAuth: true`, as `access`
 * does (access-policy-fields.ts); checked on the service a create or update would leave.
 * @throws {GatewayError} BAD_REQUEST with `fields.maxAge` / `fields.acr` `needs requireAuth`.
 */
export function assertStepUpNeedsSignIn(service: { requireAuth: boolean; maxAge?: number | null; acr?: readonly string[] | null }): void {
  if (service.requireAuth) return;
  const fields: Record<string, string> = {};
  if (service.maxAge != null) fields.maxAge = 'needs requireAuth';
  if (service.acr != null) fields.acr = 'needs requireAuth';
  if (Object.keys(fields).length > 0) throw validationError('Invalid service', fields, []);
}
