import { sendJson } from '../../shared/http/http-response.js';
import { parseExplainBody } from '../explain/explain-input.js';
import { explainService } from '../explain/service-explanation.js';
import { readJsonBody } from '../http/request-body.js';
import type { Handler } from '../http/request-context.js';
import type { ServiceRegistry } from '../registry/service-registry.js';

/**
 * `POST /api/services/:id/explain` with `{ path, method?, user?: { sub?, email?, groups? }, host?,
 * corsPreflight? }` → 200, the explanation (admin/explain/explanation.ts): which part of the
 * service decides that request and why (design.md §4.18). Read only, so not audited; a write like
 * the other POSTs to the guards (route-table.ts: an admin session with its CSRF token, or a
 * `write` API token). 404 `Service not found`; 400 with `fields` for a bad question.
 */
export function createExplainHandler(registry: ServiceRegistry): Handler {
  return async (ctx) => {
    const service = registry.get(ctx.params.id!);
    const input = parseExplainBody(await readJsonBody(ctx));
    sendJson(ctx.res, 200, explainService(service, registry.snapshot(), input));
  };
}
