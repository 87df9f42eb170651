import * as v from 'valibot';
import { GatewayError } from '../../shared/errors.js';
import { parseWith, requireObject } from '../http/json-body-validation.js';
import { accessSchema, assertPolicyNeedsSignIn } from './access-policy-fields.js';
import { poolEntries, poolPatchEntries, targetEntries, withPool, type Targets } from './pool-fields.js';
import { ruleEntries, rulePatchEntries } from './rule-fields.js';
import { assertStepUpNeedsSignIn, stepUpEntries, stepUpPatchEntries } from './step-up-fields.js';
import { withoutEmptyHosts } from './stored-service.js';
import { booleanSchema, descriptionSchema, hostsSchema, nameSchema, pathSchema } from './service-fields.js';

/**
 * Validation of the admin API's service bodies (interface.md §4.2, design.md §5): the create, PUT
 * and toggle bodies and a registry document's entries, put together from the fields' rules
 * (service-fields.ts, pool-fields.ts, access-policy-fields.ts, rule-fields.ts). Pure functions: they read an
 * already-parsed JSON value and either return a typed value or throw a {@link GatewayError}.
 */

const REQUIRED_ON_CREATE = ['name', 'path', 'targetUrl'] as const;
/** Fields a PUT body may carry but that are set by the service; ignored, not errors (design.md §5). */
export const READ_ONLY = ['id', 'createdAt', 'updatedAt'] as const;

const createSchema = v.object({
  name: nameSchema,
  path: pathSchema,
  hosts: v.optional(hostsSchema),
  ...targetEntries,
  requireAuth: v.optional(booleanSchema, true),
  description: v.optional(descriptionSchema, ''),
  access: v.optional(accessSchema, null),
  forwardAuthorization: v.optional(booleanSchema, false),
  ...poolEntries,
  ...ruleEntries,
  ...stepUpEntries,
});

const updateSchema = v.object({
  name: v.optional(nameSchema),
  path: v.optional(pathSchema),
  hosts: v.optional(hostsSchema),
  ...targetEntries,
  requireAuth: v.optional(booleanSchema),
  description: v.optional(descriptionSchema),
  enabled: v.optional(booleanSchema),
  access: v.optional(accessSchema),
  forwardAuthorization: v.optional(booleanSchema),
  ...poolPatchEntries,
  ...rulePatchEntries,
  ...stepUpPatchEntries,
});

/**
 * A service as a registry document declares it (design.md §4.9): the create body's fields with
 * the same defaults, and `enabled` (default true); the entry's `id` is ignored.
 */
const entrySchema = v.object({ ...createSchema.entries, enabled: v.optional(booleanSchema, true) });

const toggleSchema = v.object({ enabled: booleanSchema });

/**
 * The bodies' schemas, for the API's description (admin/openapi/), which converts their structure to
 * JSON Schema; what `v.check` and the transforms add is said in words there.
 */
export const SERVICE_BODY_SCHEMAS = { create: createSchema, update: updateSchema, toggle: toggleSchema };

/** What a schema of a whole service gives, its `targetUrl` and `targets` made one ({@link withPool}). */
type Whole<S extends v.GenericSchema> = Omit<v.InferOutput<S>, keyof Targets> & Targets;

/**
 * A validated create body: `name` trimmed, `hosts` normalized (absent when none), `requireAuth` defaulted to true, `description` to '',
 * `access` normalised (null when none), `forwardAuthorization` defaulted to false; `targetUrl` and
 * `targets` both present ({@link withPool}), `loadBalancing`, `healthCheck`, `outlierDetection`
 * (each of its fields) and `retries` defaulted (shared/services/target-pool-settings.ts), `rules`
 * to `[]` and `corsPreflight` to `auth` (rule-fields.ts), `maxAge` and `acr` to null (step-up-fields.ts).
 */
export type ServiceCreateInput = Whole<typeof createSchema>;
/**
 * A validated PUT body: only the fields present, each valid (`access` normalised, `hosts` `[]` to remove them all, a health check's
 * and outlier detection's absent fields defaulted); read-only fields dropped. `targetUrl` and
 * `targets` are both present or both absent ({@link withPool}).
 */
export type ServicePatch = v.InferOutput<typeof updateSchema>;
/** A validated registry document entry: every writable field of a service, defaults filled in. */
export type ServiceEntryInput = Whole<typeof entrySchema>;
/** A validated toggle body (interface.md §4.2 PATCH /api/services/:id/toggle). */
export type ToggleInput = v.InferOutput<typeof toggleSchema>;

/**
 * Validates a POST /api/services body (interface.md §4.2, design.md §5).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object` for arrays, null and primitives;
 *   MISSING_FIELDS (exact spec message, `fields` naming what is absent) when `name` or `path` is
 *   absent or null, or `targetUrl` is and `targets` too; BAD_REQUEST with `fields` for every
 *   invalid or unknown field, and with `fields.targetUrl` when it is not the first target's url.
 */
export function parseServiceCreate(body: unknown): ServiceCreateInput {
  return parseWhole(createSchema, body, []);
}

/**
 * Validates one service of a registry document (design.md §4.9) by the create body's rules, with
 * `enabled` besides; `id` is ignored (a document's services are matched by path).
 * @throws {GatewayError} as {@link parseServiceCreate}.
 */
export function parseServiceEntry(entry: unknown): ServiceEntryInput {
  return parseWhole(entrySchema, entry, ['id']);
}

/**
 * A whole service (a create body, a document entry): `name`, `path` and `targetUrl` or `targets`
 * present, every field valid, `targetUrl` and `targets` agreeing, a policy and step-up only with `requireAuth`.
 */
function parseWhole<S extends typeof createSchema | typeof entrySchema>(schema: S, body: unknown, ignored: readonly string[]): Whole<S> {
  const object = requireObject(body);
  const given = (field: string) => object[field] !== undefined && object[field] !== null;
  const missing = REQUIRED_ON_CREATE.filter((field) => !given(field) && !(field === 'targetUrl' && given('targets')));
  if (missing.length > 0) {
    throw new GatewayError('MISSING_FIELDS', { fields: Object.fromEntries(missing.map((f) => [f, 'is required'])) });
  }
  const input = parseWith(schema, object, 'Invalid service', ignored);
  assertPolicyNeedsSignIn(input);
  assertStepUpNeedsSignIn(input);
  return withoutEmptyHosts(withPool(input)) as Whole<S>;
}

/**
 * Validates a PUT /api/services/:id body: any subset of the writable fields, `enabled` included
 * (design.md §5). `id`, `createdAt` and `updatedAt` are ignored; an empty object is a valid no-op.
 * A lone `targetUrl` replaces the pool with that one target, lone `targets` set `targetUrl` to
 * their first url ({@link withPool}).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` for every
 *   invalid or unknown field, or with `fields.targetUrl` when it is not the first target's url.
 */
export function parseServiceUpdate(body: unknown): ServicePatch {
  const patch = withPool(parseWith(updateSchema, requireObject(body), 'Invalid service', READ_ONLY));
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as ServicePatch;
}

/**
 * Validates a PATCH /api/services/:id/toggle body, `{ "enabled": <boolean> }` (interface.md §4.2).
 * @throws {GatewayError} BAD_REQUEST `Body must be a JSON object`, or with `fields` when `enabled`
 *   is missing or not a boolean, or another field is present.
 */
export function parseToggle(body: unknown): ToggleInput {
  return parseWith(toggleSchema, requireObject(body), 'Invalid toggle body', []);
}
