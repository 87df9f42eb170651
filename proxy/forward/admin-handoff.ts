import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/logger.js';
import { UpstreamForwarder, type AdminProcessTarget } from './upstream-forwarder.js';
import { readInboundHeaders } from '../headers/inbound-headers.js';
import { RequestHeaderBuilder } from '../headers/request-headers.js';

/** The split-mode hand-off of gateway-owned paths to the admin process. */
export interface AdminHandoff {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Closes the connections to the admin process once their requests are done. */
  close(): Promise<void>;
}

/** The settings the hand-off reads: ADMIN_INTERNAL_URL, PUBLIC_URL, TRUST_PROXY, UPSTREAM_TIMEOUT. */
export type AdminHandoffConfig = Pick<Config, 'adminInternalUrl' | 'publicUrl' | 'trustProxy' | 'upstreamTimeoutMs'>;

/**
 * In split mode the proxy serves gateway-owned paths (`/auth`, `/api`, `/dashboard`, `/`) by
 * forwarding them to the admin process at `ADMIN_INTERNAL_URL`, through the data plane's own
 * forwarder (forward.ts, with a pool of its own): request bodies streamed, `Expect` answered by
 * the proxy, the same answers to failures as for a service (503 `Service unavailable` when the
 * admin process cannot be reached, 504 after UPSTREAM_TIMEOUT without response headers, 502 for a
 * broken response), proxied traffic unaffected by any of them. Request fields follow the `admin`
 * header policy (request-headers.ts: the gateway's cookies and `X-CSRF-Token` kept,
 * `X-Forwarded-For` the address `clientIp` resolves, the public-origin mark set); the answer
 * reaches the client unmapped (its `Set-Cookie` and `Location` are the gateway's own). Handed-off
 * requests are no service's: neither access-logged nor counted in the upstream-error metrics.
 */
export function createAdminHandoff(
  config: AdminHandoffConfig,
  clientIp: (req: IncomingMessage) => string,
  logger: Logger,
): AdminHandoff {
  const target: AdminProcessTarget = { origin: config.adminInternalUrl.origin, service: undefined };
  const headers = new RequestHeaderBuilder(config.trustProxy, config.publicUrl, 'admin');
  const forwarder = new UpstreamForwarder({ headersTimeoutMs: config.upstreamTimeoutMs, logger });
  return {
    handle(req, res) {
      const inbound = readInboundHeaders(req.rawHeaders);
      const list = headers.build(req, inbound, undefined, clientIp(req), undefined);
      forwarder.forward(req, res, target, req.url ?? '/', list, inbound.hasBody ? 'body' : 'no-body');
    },
    close: () => forwarder.close(),
  };
}
