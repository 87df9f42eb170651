import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import { acceptsHtml, sendError, sendHtml } from '../../shared/http/http-response.js';
import { serviceDisabledPage } from '../../shared/pages/service-disabled-page.js';
import type { Service } from '../../shared/types.js';

/**
 * The 503 for a disabled service (design.md §3.4, §5): `{"error":"Service is disabled"}`, or, when
 * the request accepts `text/html` (a person in a browser), the gateway's page saying so, still 503.
 */
export function sendServiceDisabled(res: ServerResponse, service: Service, accept: string | undefined): void {
  if (acceptsHtml(accept)) sendHtml(res, 503, serviceDisabledPage(service));
  else sendError(res, new GatewayError('SERVICE_DISABLED'));
}
