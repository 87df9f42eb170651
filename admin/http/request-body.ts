import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import type { RequestContext } from './request-context.js';
import { closingFields } from '../../shared/http/connection-close.js';

/** Largest JSON body the admin API reads (design.md §5), in bytes. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;
/**
 * Largest registry document `POST /api/services/apply` reads (design.md §4.9), in bytes: about
 * 30,000 services. Only an authenticated admin or write token gets to send one.
 */
export const MAX_REGISTRY_DOCUMENT_BYTES = 8 * 1024 * 1024;
/** Largest form body accepted (an authorization response or a logout form is a few KiB), in bytes. */
const MAX_FORM_BODY_BYTES = 64 * 1024;

/**
 * Reads a JSON request body (design.md §5) of at most `maxBytes`.
 * @throws {GatewayError} UNSUPPORTED_MEDIA_TYPE (415) unless Content-Type is application/json;
 *   BODY_TOO_LARGE (413) past `maxBytes`; INVALID_JSON (400) when it does not parse;
 *   REQUEST_TIMEOUT (408) as {@link readBody}.
 */
export async function readJsonBody(ctx: RequestContext, maxBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
  if (mediaType(ctx.req) !== 'application/json') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE');
  if (Number(ctx.req.headers['content-length'] ?? 0) > maxBytes) throw new GatewayError('BODY_TOO_LARGE');
  const body = await readBody(ctx, maxBytes);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new GatewayError('INVALID_JSON');
  }
}

/**
 * Reads an `application/x-www-form-urlencoded` body (the form_post authorization response, the
 * logout form).
 * @throws {GatewayError} BAD_REQUEST (400) for another content type; BODY_TOO_LARGE (413) past
 *   `maxBytes` (64 KiB unless given); REQUEST_TIMEOUT (408) as {@link readBody}.
 */
export async function readFormBody(ctx: RequestContext, maxBytes = MAX_FORM_BODY_BYTES): Promise<URLSearchParams> {
  if (!isFormBody(ctx.req)) throw new GatewayError('BAD_REQUEST');
  if (Number(ctx.req.headers['content-length'] ?? 0) > maxBytes) throw new GatewayError('BODY_TOO_LARGE');
  return new URLSearchParams((await readBody(ctx, maxBytes)).toString('latin1'));
}

/** Whether the request's body is an HTML form's (`application/x-www-form-urlencoded`). */
export function isFormBody(req: IncomingMessage): boolean {
  return mediaType(req) === 'application/x-www-form-urlencoded';
}

function mediaType(req: IncomingMessage): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
}

/**
 * The whole body, up to `maxBytes`. A client that stops sending for `ctx.bodyPauseMs` (the
 * UPSTREAM_TIMEOUT that also bounds a proxied upload's pauses) gets 408 `Request timeout` and the
 * connection is closed, so a stalled body never holds a request open (design.md §5).
 * @throws {GatewayError} BODY_TOO_LARGE (413); REQUEST_TIMEOUT (408, with `Connection: close`).
 */
function readBody(ctx: RequestContext, maxBytes: number): Promise<Buffer> {
  const { req, bodyPauseMs } = ctx;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const settle = (error?: Error) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => settle(new GatewayError('REQUEST_TIMEOUT', { headers: { ...closingFields(req) } })), bodyPauseMs);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return settle(new GatewayError('BODY_TOO_LARGE'));
      chunks.push(chunk);
      arm();
    };
    const onEnd = () => settle();
    const onClose = () => settle(new Error('client closed the connection before its body ended'));
    req.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
    arm();
  });
}
