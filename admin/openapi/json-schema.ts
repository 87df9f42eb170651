import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

/** Valibot schemas by the name `components.schemas` gives them. */
export type NamedSchemas = Record<string, v.GenericSchema>;

/**
 * How the API's valibot schemas become the JSON Schema (2020-12, the dialect of OpenAPI 3.1) of its
 * description, by `@valibot/to-json-schema`:
 * - `typeMode: 'output'`: a pipe is described by its last schema, so an access policy is its
 *   object, not the guard before it (`v.custom`, which JSON Schema cannot say);
 * - the actions JSON Schema has no word for are left out, and the fields' descriptions say them:
 *   `v.check` (the rules written in code: path segments, URL form, email and domain entries, a date
 *   that exists), and the normalisations that keep a value's type (trimming, lowercasing, lists
 *   kept once, an empty policy read as null). Any other schema or action that cannot be converted
 *   throws, so none is dropped unnoticed;
 * - a part that is itself a named schema is a `$ref` to `#/components/schemas/<name>`.
 */
const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  typeMode: 'output',
  errorMode: 'throw',
  ignoreActions: ['check', 'trim', 'to_lower_case', 'transform'],
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
};

/** `named` as `components.schemas`: each converted, referring to the others by `$ref`. */
export function componentSchemas(named: NamedSchemas): Record<string, JsonSchema> {
  return toJsonSchemaDefs(named, CONVERSION);
}

/**
 * One schema for use inside the document (a parameter's, an answer's), its parts that are in
 * `named` as `$ref`s to the components: without the `$schema` and `$defs` of a standalone schema.
 */
export function inlineSchema(schema: v.GenericSchema, named: NamedSchemas): JsonSchema {
  const { $schema: _dialect, $defs: _components, ...inline } = toJsonSchema(schema, { ...CONVERSION, definitions: named });
  return inline;
}
