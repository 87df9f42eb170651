import { sendJson } from '../../shared/http/http-response.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi/document.js';
import type { Handler } from '../http/request-context.js';
import type { ServedOrigin } from '../http/served-origin.js';

/** The admin API's description (design.md §4.10); route-table.ts serves it wherever the admin API is. */
export interface OpenApiHandlers {
  document: Handler;
}

/**
 * Builds the OpenAPI document of each origin that serves the admin API once, at start (they differ
 * in the session cookie's name).
 */
export function createOpenApiHandlers(deps: { origins: readonly ServedOrigin[] }): OpenApiHandlers {
  const documents = new Map<ServedOrigin, OpenApiDocument>();
  for (const origin of deps.origins) if (origin.servesConsole && !documents.has(origin)) documents.set(origin, buildOpenApiDocument(origin));
  return {
    /** GET /api/openapi.json → 200, the OpenAPI 3.1 document of the origin asked; no credentials needed. */
    document: ({ res, origin }) => sendJson(res, 200, documents.get(origin)),
  };
}
