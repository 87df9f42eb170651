/**
 * Checks real HTTP exchanges against an OpenAPI 3.1 document: the document itself against the
 * OpenAPI 3.1 schema (@seriousme/openapi-schema-validator), every JSON Schema in it compiled by
 * Ajv's JSON Schema 2020-12 validator in strict mode (unknown keywords are errors), and each answer
 * against the operation it belongs to: its status documented, its media type, its required
 * headers, its body; for a successful one, also what was sent (query values and JSON body), so the
 * document never refuses what the API takes.
 */
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { apiClient, type ApiResponse, type CallOptions } from './api-client.js';

/** ajv-formats is CommonJS: its default import is the plugin itself. */
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

type Json = Record<string, any>;

/** Where the document's components are registered with Ajv; its `$ref`s are rewritten to point there. */
const COMPONENTS_ID = 'urn:gatehouse:openapi-components';

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Json;
}

/** Validates an OpenAPI 3.1 document; resolves with the errors, none when it is valid. */
export async function openApiErrors(document: unknown): Promise<unknown[]> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as Json);
  if (result.valid && validator.version !== '3.1') return [`OpenAPI version ${validator.version}, not 3.1`];
  return result.valid ? [] : [result.errors];
}

export class OpenApiChecker {
  readonly #ajv = new Ajv2020({ strict: true, allErrors: true });
  readonly #operations: Operation[];
  readonly #compiled = new Map<object, ValidateFunction>();
  /** `<operationId> <status>` of every answer checked. */
  readonly seen = new Set<string>();

  /** @throws when a schema of the document does not compile. */
  constructor(document: Json) {
    addFormats(this.#ajv);
    const rewritten = JSON.parse(JSON.stringify(document).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`)) as Json;
    this.#ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewritten.components.schemas });
    this.#operations = Object.entries(rewritten.paths as Json).flatMap(([template, item]) =>
      Object.entries(item as Json).map(([method, operation]) => ({ method: method.toUpperCase(), template, pattern: templatePattern(template), operation })),
    );
    for (const { operation } of this.#operations) for (const schema of schemasOf(operation)) this.#validator(schema);
  }

  /** Every operation as `<operationId> <status>` of its success answer (the lowest 2xx). */
  successes(): string[] {
    return this.#operations.map(({ operation }) => {
      const status = Object.keys(operation.responses).filter((s) => s.startsWith('2')).sort()[0];
      return `${operation.operationId} ${status}`;
    });
  }

  /**
   * Asserts that `response`, the answer to `method` `target` (path and query) with JSON `body`,
   * is what the document says.
   */
  check(method: string, target: string, body: unknown, response: ApiResponse): void {
    const url = new URL(target, 'http://gateway.test');
    const what = `${method} ${target} → ${response.status} ${response.text.slice(0, 300)}`;
    const found = this.#operations.find((o) => o.method === method && o.pattern.test(url.pathname));
    assert.ok(found, `${method} ${url.pathname} is not in the document`);
    const { operation } = found;
    const answer = operation.responses[String(response.status)] as Json | undefined;
    assert.ok(answer, `${what}: status ${response.status} is not documented for ${operation.operationId}`);
    for (const [name, header] of Object.entries((answer.headers ?? {}) as Json)) {
      if (header.required) assert.ok(response.headers[name.toLowerCase()] !== undefined, `${what}: no ${name} header`);
    }
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (answer.content === undefined) {
      assert.equal(response.text, '', `${what}: a body where the document has none`);
    } else {
      const content = answer.content[mediaType] as Json | undefined;
      assert.ok(content, `${what}: content type ${mediaType} is not documented`);
      this.#assertValid(content.schema, response.json, `${what}: body`);
    }
    if (response.status < 300) this.#checkRequest(operation, url.searchParams, body, what);
    this.seen.add(`${operation.operationId} ${response.status}`);
  }

  /** What a successful request sent must be what the document accepts. */
  #checkRequest(operation: Json, query: URLSearchParams, body: unknown, what: string): void {
    const parameters = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
    for (const [name, text] of query) {
      const parameter = parameters.find((p) => p.name === name);
      assert.ok(parameter, `${what}: query parameter ${name} is not documented`);
      const numeric = parameter.schema.type === 'integer' || parameter.schema.type === 'number';
      if (text !== '') this.#assertValid(parameter.schema, numeric ? Number(text) : text, `${what}: query parameter ${name}`);
    }
    if (body !== undefined) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      assert.ok(schema, `${what}: a body the document does not take`);
      this.#assertValid(schema, body, `${what}: request body`);
    }
  }

  #assertValid(schema: Json, value: unknown, what: string): void {
    const validate = this.#validator(schema);
    assert.ok(validate(value), `${what} does not match the document: ${this.#ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
  }

  #validator(schema: Json): ValidateFunction {
    let validate = this.#compiled.get(schema);
    if (!validate) this.#compiled.set(schema, (validate = this.#ajv.compile(schema)));
    return validate;
  }
}

/** `/api/services/{id}` as a pattern matching its paths. */
function templatePattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}

/** The JSON Schemas of an operation: its parameters', its body's, its answers' and their headers'. */
function schemasOf(operation: Json): Json[] {
  const parameters = ((operation.parameters ?? []) as Json[]).map((p) => p.schema);
  const body = Object.values((operation.requestBody?.content ?? {}) as Json).map((c) => c.schema);
  const answers = Object.values(operation.responses as Json).flatMap((answer: Json) => [
    ...Object.values((answer.content ?? {}) as Json).map((c) => c.schema),
    ...Object.values((answer.headers ?? {}) as Json).map((h) => h.schema),
  ]);
  return [...parameters, ...body, ...answers];
}

/**
 * {@link apiClient} whose every answer is checked by `checker`: the same calls, and a call whose
 * exchange the document does not describe fails the test.
 */
export function checkedApiClient(baseUrl: string, checker: OpenApiChecker) {
  const call = apiClient(baseUrl);
  return async (method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> => {
    const response = await call(method, path, options);
    checker.check(method, path, options.json, response);
    return response;
  };
}
