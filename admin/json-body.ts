import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../shared/errors.js';

/** Largest JSON body the admin API reads (DESIGN §5), in bytes. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * Reads a JSON request body (DESIGN §5).
 * @throws {GatewayError} UNSUPPORTED_MEDIA_TYPE (415) unless Content-Type is application/json;
 *   BODY_TOO_LARGE (413) past {@link MAX_JSON_BODY_BYTES}; INVALID_JSON (400) when it does not parse.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE');
  if (Number(req.headers['content-length'] ?? 0) > MAX_JSON_BODY_BYTES) throw new GatewayError('BODY_TOO_LARGE');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BODY_BYTES) throw new GatewayError('BODY_TOO_LARGE');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new GatewayError('INVALID_JSON');
  }
}
