import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import { acceptsHtml, redirect } from '../../shared/http/http-response.js';
import type { ServedOrigin } from './served-origin.js';

/** Path prefixes of the console and the admin API, served only where `servesConsole` holds. */
const CONSOLE_PREFIXES = ['/api', '/dashboard'];

/**
 * Answers a request no route of its origin takes. On the public origin while ADMIN_URL is set
 * (design.md §4.5, design.md §5 "admin origin"), the console and the admin API are not there: a browser
 * asking for a console page (`GET`/`HEAD` under `/dashboard`, accepting `text/html`) is sent to the
 * same page on ADMIN_URL (302), anything else under `/api` or `/dashboard` gets 404
 * `Service not found`, as for a path no service is registered at.
 * @throws {GatewayError} SERVICE_NOT_FOUND as above; NOT_FOUND (404 `Not found`) for any other path.
 */
export function answerUnrouted(req: IncomingMessage, res: ServerResponse, url: URL, origin: ServedOrigin): void {
  const path = url.pathname;
  const consolePath = CONSOLE_PREFIXES.find((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  if (origin.servesConsole || consolePath === undefined) throw new GatewayError('NOT_FOUND');
  const method = req.method ?? 'GET';
  if (consolePath === '/dashboard' && (method === 'GET' || method === 'HEAD') && acceptsHtml(req.headers.accept)) {
    return redirect(res, `${origin.consoleOrigin}${path}${url.search}`);
  }
  throw new GatewayError('SERVICE_NOT_FOUND');
}
