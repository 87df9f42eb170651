import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';
import type { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { newRequestId } from '../../shared/tracing/random-ids.js';
import { requestTraceOf, type RequestTrace } from '../../shared/tracing/request-trace.js';
import { parseTraceParent } from '../../shared/tracing/trace-context.js';
import type { AdminTracing } from './admin-tracing.js';
import { REQUEST_ID_FIELD, requestIdOf } from '../../shared/http/request-id.js';
import { endServerSpan, isRequestId } from '../../shared/tracing/server-span.js';

/** A request's id and place in a trace as the admin plane serves it (design.md §3.10). */
export interface AdminRequestIdentity {
  /** What the answer's `X-Request-Id` carries, and every log line the request causes. */
  readonly requestId: string;
  /**
   * The span the request's own spans hang under, while its trace is sampled: the admin's server
   * span, or in the embedded process the data plane's (no second server span for one request).
   */
  readonly span: Span | undefined;
}

/** What a trusted peer's `X-Request-Id` may be: 1–128 visible ASCII characters. */

/**
 * Gives each request the admin plane serves its id and its trace. A request on ADMIN_PORT from a
 * trusted peer (a proxy process handing a request over, which the admin process trusts on loopback
 * and TRUST_PROXY; in the embedded process TRUST_PROXY's peers) keeps its `X-Request-Id` and
 * continues its `traceparent`: a handed-off request is one request, one id and one trace with the
 * proxy's. Any other gets a fresh id and a new trace (continuing its caller's only with
 * TRACE_TRUST_INCOMING, else linking to it), sampled by OTEL_TRACES_SAMPLER before any span
 * exists; a sampled one's id is its trace id, as in the data plane. A request this process's data
 * plane hands over has both already.
 */
export class AdminRequestIdentities {
  readonly #trusted: TrustedProxies;
  readonly #clientIp: (req: IncomingMessage) => string;
  readonly #tracing: AdminTracing;
  readonly #trustIncoming: boolean;

  /** `trusted`: the peers whose ids and traces are kept; `clientIp` resolves a request's client address. */
  constructor(trusted: TrustedProxies, clientIp: (req: IncomingMessage) => string, tracing: AdminTracing, trustIncoming: boolean) {
    this.#trusted = trusted;
    this.#clientIp = clientIp;
    this.#tracing = tracing;
    this.#trustIncoming = trustIncoming;
  }

  /**
   * The identity of a request arriving on ADMIN_PORT, its id set as `X-Request-Id` on `res`; a
   * sampled request's server span ends when `res` closes.
   */
  ofAdminPort(req: IncomingMessage, res: ServerResponse): AdminRequestIdentity {
    const trustedPeer = this.#trusted.trusts(req.socket.remoteAddress ?? '');
    const trace = this.#tracing.on ? this.#trace(req, trustedPeer) : undefined;
    const given = req.headers['x-request-id'];
    const requestId = trustedPeer && typeof given === 'string' && isRequestId(given) ? given : trace?.sampled ? trace.traceId : newRequestId();
    res.setHeader('x-request-id', requestId);
    const span = trace?.span;
    if (span !== undefined) res.once('close', () => endServerSpan(span, res, requestId));
    return { requestId, span };
  }

  /** The identity this process's data plane gave a request it hands over (its `X-Request-Id` set on `res`, its trace on `req`). */
  ofInProcess(req: IncomingMessage, res: ServerResponse): AdminRequestIdentity {
    // The data plane gave `res` its id without a field (shared/http/request-id.ts): the admin's own answers carry it as one.
    const requestId = requestIdOf(res) ?? newRequestId();
    res.setHeader(REQUEST_ID_FIELD, requestId);
    return { requestId, span: requestTraceOf(req)?.span };
  }

  #trace(req: IncomingMessage, trustedPeer: boolean): RequestTrace {
    const field = req.headers.traceparent; // two fields arrive joined, and then parse as none (W3C Trace Context §3.2)
    const incoming = parseTraceParent(typeof field === 'string' ? field : undefined);
    const parent = incoming !== undefined && (trustedPeer || this.#trustIncoming) ? incoming : undefined;
    const context = parent ? { parent } : { link: incoming };
    return this.#tracing.requestTrace(context, req.method ?? 'GET', () => this.#serverAttributes(req));
  }

  /**
   * The server span's attributes at its start (OpenTelemetry HTTP semantic conventions, stable).
   * The query's keys only, whatever TRACE_QUERY says: the admin's queries carry sign-in codes.
   */
  #serverAttributes(req: IncomingMessage): Attributes {
    const target = req.url ?? '/';
    const queryStart = target.indexOf('?');
    const attributes: Attributes = {
      'http.request.method': req.method ?? 'GET',
      'url.path': queryStart === -1 ? target : target.slice(0, queryStart),
      'url.scheme': (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      'client.address': this.#clientIp(req),
      'network.protocol.version': req.httpVersion,
    };
    if (queryStart !== -1) attributes['url.query'] = [...new URLSearchParams(target.slice(queryStart + 1)).keys()].map((key) => `${key}=`).join('&');
    const host = req.headers.host;
    if (host !== undefined) attributes['server.address'] = host.replace(/:\d+$/, '');
    const userAgent = req.headers['user-agent'];
    if (userAgent !== undefined) attributes['user_agent.original'] = userAgent;
    return attributes;
  }
}

/**
 * Names the request's span by the admin route that serves it (`POST /auth/callback`,
 * `GET /api/services/:id/logs`): the semantic conventions' low-cardinality name, never a raw path.
 * In the embedded process that is the data plane's server span, which has no route of its own for
 * a gateway-owned path.
 */
export function nameRequestSpan(span: Span | undefined, method: string | undefined, route: string): void {
  span?.updateName(`${method ?? 'GET'} ${route}`).setAttribute('http.route', route);
}

