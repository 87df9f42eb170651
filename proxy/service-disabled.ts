import type { ServerResponse } from 'node:http';
import { GatewayError } from '../shared/errors.js';
import { acceptsHtml, sendError, sendHtml } from '../shared/http-response.js';
import { html } from '../shared/html.js';
import { page } from '../shared/pages/layout.js';
import type { Service } from '../shared/types.js';

/**
 * The 503 for a disabled service (design.md §3.4, §5): `{"error":"Service is disabled"}`, or, when
 * the request accepts `text/html` (a person in a browser), a page in the gateway's look, still 503,
 * that says the service is turned off rather than broken.
 */
export function sendServiceDisabled(res: ServerResponse, service: Service, accept: string | undefined): void {
  if (acceptsHtml(accept)) sendHtml(res, 503, serviceDisabledPage(service));
  else sendError(res, new GatewayError('SERVICE_DISABLED'));
}

/** Names the service by its path, which the visitor typed anyway; its name may be internal. */
function serviceDisabledPage(service: Service): string {
  return page(
    'Service disabled',
    html`<h1>Service disabled</h1>
<p class="error" role="alert">The service at <code>${service.path}</code> is turned off.</p>
<p>An administrator has disabled it for now. Try again later, or ask them to enable it.</p>
<p><a class="button secondary" href="/">Home</a></p>`,
  );
}
