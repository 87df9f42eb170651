import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../shared/errors.js';

/** Largest form body accepted (an authorization response is a few KiB), in bytes. */
const MAX_FORM_BODY_BYTES = 64 * 1024;

/**
 * Reads an `application/x-www-form-urlencoded` body (the form_post authorization response).
 * @throws {GatewayError} BAD_REQUEST (400) for another content type; BODY_TOO_LARGE (413) past 64 KiB.
 */
export async function readFormBody(req: IncomingMessage): Promise<URLSearchParams> {
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new GatewayError('BAD_REQUEST');
  let body = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    body += chunk.toString('latin1');
    if (body.length > MAX_FORM_BODY_BYTES) throw new GatewayError('BODY_TOO_LARGE');
  }
  return new URLSearchParams(body);
}
