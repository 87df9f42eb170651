import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError, gatewayErrorOf } from '../errors.js';
import { unavailablePage } from '../pages/unavailable-page.js';
import { acceptsHtml, sendError, sendHtml } from './http-response.js';

/**
 * The last step of both planes for a request that failed (admin/admin-plane.ts,
 * proxy/pipeline/proxy-plane.ts), so that every path answers a failure the same way: what
 * {@link gatewayErrorOf} makes of `error` (a backend that cannot be reached is 503), else 500
 * `Internal server error` after `onUnexpected(error)` has logged it. A 503 goes to a browser (an
 * `Accept` naming text/html) as a page, everything else as `{ "error": message }` (interface.md
 * §2.6). A response already started is cut instead: its status is on the wire.
 */
export function answerFailure(req: IncomingMessage, res: ServerResponse, error: unknown, onUnexpected: (error: unknown) => void): void {
  const known = gatewayErrorOf(error);
  if (known === undefined) onUnexpected(error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.destroyed) return;
  const answer = known ?? new GatewayError('INTERNAL');
  if (answer.status === 503 && acceptsHtml(req.headers.accept)) sendHtml(res, 503, unavailablePage(answer.message), answer.headers);
  else sendError(res, answer);
}
