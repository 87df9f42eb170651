import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import { GatewayError } from '../../shared/errors.js';
import { sendError } from '../../shared/http/http-response.js';
import { withRequestId } from '../../shared/http/request-id.js';

/** The share of ASSERTION_TTL a verifier (or a cache between) may keep the key set, as `max-age`. */
const MAX_AGE_SHARE_OF_TTL = 5;

/**
 * `GET /.well-known/jwks.json` on the public port (design.md §4.7): the public keys of the
 * identity assertion, `{"keys": [...]}` (RFC 7517 §5), each with `kid`, `alg: ES256` and
 * `use: sig`, newest first, as the data plane's key set has them; the document is built once per
 * key set. `Cache-Control: public, max-age` a fifth of ASSERTION_TTL, so a verifier that caches it
 * by the header meets a new key well before the previous one stops being published. `HEAD` gets
 * the headers; other methods 405 with `Allow`; 503 `Service unavailable` before any key set has
 * arrived. Not rate-limited: it is the same few bytes for every caller, as cheap as a 429.
 */
export class JwksEndpoint {
  readonly #cacheControl: string;
  #document: Buffer | undefined;

  /** `ttlMs`: ASSERTION_TTL. */
  constructor(ttlMs: number) {
    this.#cacheControl = `public, max-age=${Math.floor(ttlMs / 1000 / MAX_AGE_SHARE_OF_TTL)}`;
  }

  /** Publishes `keys.published` from now on. */
  useKeys(keys: AssertionKeySet): void {
    this.#document = Buffer.from(JSON.stringify({ keys: keys.published }));
  }

  serve(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') {
      return sendError(res, new GatewayError('METHOD_NOT_ALLOWED', { headers: { allow: 'GET, HEAD' } }));
    }
    const document = this.#document;
    if (document === undefined) return sendError(res, new GatewayError('SERVICE_UNAVAILABLE'));
    res.writeHead(
      200,
      withRequestId(res, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': document.length,
        'cache-control': this.#cacheControl,
        'x-content-type-options': 'nosniff',
      }),
    );
    res.end(method === 'HEAD' ? undefined : document);
  }
}
