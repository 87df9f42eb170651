import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CERTIFICATE_FETCH_PATH } from '../../shared/tls/acme-messages.js';
import type { AcmeCertificates } from './acme-certificates.js';

/**
 * `GET /internal/certificates` on the admin port (design.md §4.15): the certificates ACME keeps,
 * private keys included (shared/tls/acme-messages.ts `CertificateBundle`), for the proxy
 * processes, which present the fetch token of the certificate notice they read from Redis as
 * `Authorization: Bearer <token>`. Anything else gets 401 (compared on SHA-256 digests in constant
 * time); other methods 405. No data plane forwards `/internal/…` here: it is not a gateway path.
 * @returns a request listener that answers that path and returns false for every other.
 */
export function certificateFetchEndpoint(certificates: AcmeCertificates): (req: IncomingMessage, res: ServerResponse) => boolean {
  const expected = sha256(certificates.fetchToken);
  return (req, res) => {
    if ((req.url ?? '').split('?')[0] !== CERTIFICATE_FETCH_PATH) return false;
    if (req.method !== 'GET') {
      send(res, 405, { error: 'Method not allowed' }, { allow: 'GET' });
      return true;
    }
    const presented = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (presented === undefined || !timingSafeEqual(sha256(presented), expected)) {
      send(res, 401, { error: 'Not authenticated' }, { 'www-authenticate': 'Bearer' });
      return true;
    }
    send(res, 200, certificates.bundle(), {});
    return true;
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function send(res: ServerResponse, status: number, body: unknown, fields: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...fields, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}
