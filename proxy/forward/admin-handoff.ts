import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/logger.js';
import { mapResponseHeaders } from '../headers/response-headers.js';
import type { AttemptPlan, Destination, ResponseFields } from './attempt-plan.js';
import { exchange } from './exchange.js';
import { UpstreamConnections } from './upstream-connections.js';
import type { UpstreamFailureKind } from './upstream-errors.js';
import { readRequestHeaders } from '../headers/inbound-headers.js';
import { RequestHeaderBuilder } from '../headers/request-headers.js';
import { requestTraceOf } from '../../shared/tracing/request-trace.js';
import { requestIdOf } from '../../shared/http/request-id.js';

/** The split-mode hand-off of gateway-owned paths to the admin process. */
export interface AdminHandoff {
  /** Hands a request over; with `serviceHost`, a service host's reserved path, the host then told in `X-Forwarded-Host`. */
  handle(req: IncomingMessage, res: ServerResponse, serviceHost?: string): void;
  /** Closes the connections to the admin process once their requests are done. */
  close(): Promise<void>;
}

/** The settings the hand-off reads: ADMIN_INTERNAL_URL, PUBLIC_URL, TRUST_PROXY, UPSTREAM_TIMEOUT. */
export type AdminHandoffConfig = Pick<Config, 'adminInternalUrl' | 'publicUrl' | 'trustProxy' | 'upstreamTimeoutMs'>;

/**
 * In split mode the proxy serves gateway-owned paths (`/auth`, `/api`, `/dashboard`, `/`) by
 * forwarding them to the admin process at `ADMIN_INTERNAL_URL`, through the data plane's own
 * exchange (exchange.ts, with a connection pool of its own): request bodies streamed, `Expect` answered by
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
  const headers = new RequestHeaderBuilder(config.trustProxy, config.publicUrl, 'admin');
  const connections = new UpstreamConnections(config.upstreamTimeoutMs);
  const origin = config.adminInternalUrl.origin;
  return {
    handle(req, res, serviceHost) {
      const inbound = readRequestHeaders(req);
      // The request's id and trace, as the data plane gave them (design.md §3.10): the admin process continues both.
      const trace = requestTraceOf(req);
      const identity = { requestId: requestIdOf(res) ?? '', trace };
      const list = headers.build(req, inbound, undefined, clientIp(req), undefined, undefined, serviceHost, identity);
      const plan = new AdminProcessAttempt({ origin, path: req.url ?? '/' }, logger, identity.requestId);
      exchange(req, res, plan, { headers: list, mode: inbound.hasBody ? 'body' : 'no-body', trailerNames: undefined, trace, spanName: 'admin hand-off' }, connections);
    },
    close: () => connections.close(),
  };
}

/**
 * The admin process as an exchange's only destination. What it answers is the gateway's own: its
 * response heads reach the client unmapped, and its failures are no service's, so they get the
 * same answers as a service's (503, 504 after UPSTREAM_TIMEOUT, 502) and are logged at error
 * (every sign-in and console request depends on it), but are not counted in
 * `gatehouse_upstream_errors_total`, and nothing is retried.
 */
class AdminProcessAttempt implements AttemptPlan {
  readonly #destination: Destination;
  readonly #logger: Logger;
  readonly #requestId: string;

  /** `requestId`: the request's id, named in the failure's log line (design.md §3.10). */
  constructor(destination: Destination, logger: Logger, requestId: string) {
    this.#destination = destination;
    this.#logger = logger;
    this.#requestId = requestId;
  }

  first(): Destination {
    return this.#destination;
  }

  failed(): void {}

  next(): undefined {
    return undefined;
  }

  settled(): void {}

  responseFields(_destination: Destination, fields: ResponseFields): (string | string[])[] {
    return mapResponseHeaders(fields);
  }

  report(kind: UpstreamFailureKind, code: string | undefined): void {
    this.#logger.error({ kind, code, requestId: this.#requestId }, 'admin process request failed');
  }
}
