import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Attributes } from '@opentelemetry/api';
import type { TracingSettings } from '../../shared/config/tracing-settings.js';
import type { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { attachRequestTrace, RequestTrace } from '../../shared/tracing/request-trace.js';
import { newRequestId, newTraceId } from '../../shared/tracing/random-ids.js';
import { createSampler, type Sampler } from '../../shared/tracing/sampler.js';
import type { SpanExport } from '../../shared/tracing/span-export.js';
import { parseTraceParent, parseTraceState } from '../../shared/tracing/trace-context.js';
import type { InboundHeaders } from '../headers/inbound-headers.js';
import { setRequestId } from '../../shared/http/request-id.js';
import { endServerSpan, isRequestId } from '../../shared/tracing/server-span.js';

/** A request's id and, while tracing is on, its trace (design.md §3.10). */
export interface RequestIdentity {
  /** 16 hex characters; a traced request's trace id; or a trusted proxy's `X-Request-Id`. */
  readonly requestId: string;
  readonly trace: RequestTrace | undefined;
}

/**
 * Gives every request of the data plane its id and its trace (design.md §3.10). The id is sent
 * back at once (`X-Request-Id` on every answer, the gateway's errors included, which print it on
 * their pages). A caller's `traceparent` is continued only from a TRUST_PROXY peer or with
 * TRACE_TRUST_INCOMING, otherwise a new trace links to it; the sampler decides before any span
 * exists. Tracing off costs one id per request and nothing else.
 */
export class RequestIdentities {
  readonly #trusted: TrustedProxies;
  readonly #export: SpanExport | undefined;
  readonly #sampler: Sampler | undefined;
  readonly #trustIncoming: boolean;
  readonly #recordQuery: boolean;

  /** `spanExport`: the process's span export, undefined while OTEL_TRACES_EXPORTER is off. */
  constructor(trusted: TrustedProxies, settings: TracingSettings, spanExport: SpanExport | undefined) {
    this.#trusted = trusted;
    this.#export = spanExport;
    this.#sampler = spanExport && createSampler(settings.sampler.name, settings.sampler.ratio);
    this.#trustIncoming = settings.trustIncoming;
    this.#recordQuery = settings.recordQuery;
  }

  /**
   * The identity of `req` (`path` its path, `clientIp` its resolved address), its id set as
   * `X-Request-Id` on `res`; a traced request's server span ends when `res` closes.
   */
  begin(req: IncomingMessage, res: ServerResponse, inbound: InboundHeaders, path: string, clientIp: string): RequestIdentity {
    const trustedPeer = inbound.requestId !== undefined || inbound.traceparent !== undefined ? this.#trusted.trusts(req.socket.remoteAddress ?? '') : false;
    const trace = this.#sampler && this.#trace(req, inbound, path, clientIp, trustedPeer);
    const given = trustedPeer && isRequestId(inbound.requestId) ? inbound.requestId : undefined;
    const requestId = given ?? (trace?.sampled ? trace.traceId : newRequestId());
    setRequestId(res, requestId);
    if (trace !== undefined) {
      attachRequestTrace(req, trace);
      if (trace.span !== undefined) res.once('close', () => endServerSpan(trace.span!, res, requestId));
    }
    return { requestId, trace };
  }

  #trace(req: IncomingMessage, inbound: InboundHeaders, path: string, clientIp: string, trustedPeer: boolean): RequestTrace {
    const incoming = parseTraceParent(inbound.traceparent);
    const parent = incoming !== undefined && (trustedPeer || this.#trustIncoming) ? incoming : undefined;
    const traceId = parent?.traceId ?? newTraceId();
    const sampled = this.#sampler!(traceId, parent?.sampled);
    const context = { parent, link: parent === undefined ? incoming : undefined, traceState: parent && parseTraceState(inbound.tracestate) };
    const method = req.method ?? 'GET';
    return new RequestTrace(this.#export, traceId, sampled, context, method, sampled ? this.#serverAttributes(req, method, path, clientIp) : {});
  }

  /** The server span's attributes at its start (OpenTelemetry HTTP semantic conventions, stable). */
  #serverAttributes(req: IncomingMessage, method: string, path: string, clientIp: string): Attributes {
    const attributes: Attributes = {
      'http.request.method': method,
      'url.path': path,
      'url.scheme': (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      'client.address': clientIp,
      // '2' for HTTP/2 (the conventions' value), where Node says '2.0'
      'network.protocol.version': req.httpVersionMajor === 2 ? '2' : req.httpVersion,
    };
    const query = (req.url ?? '').slice(path.length + 1);
    if (query !== '') attributes['url.query'] = this.#recordQuery ? query : queryKeys(query);
    const host = req.headers.host ?? (req.headers[':authority'] as string | undefined);
    if (host !== undefined) attributes['server.address'] = host.replace(/:\d+$/, '');
    const userAgent = req.headers['user-agent'];
    if (userAgent !== undefined) attributes['user_agent.original'] = userAgent;
    return attributes;
  }
}

/**
 * Names the server span for its route once known (`GET /app`, `GET app.example.com`): the
 * semantic conventions' low-cardinality name, never a raw path.
 */
export function nameServerSpan(trace: RequestTrace | undefined, method: string | undefined, route: string, serviceId: string): void {
  const span = trace?.span;
  if (span === undefined) return;
  span.updateName(`${method ?? 'GET'} ${route}`);
  span.setAttributes({ 'http.route': route, 'gatehouse.service.id': serviceId });
}

/** A query's keys alone, `a=&b=` (values may hold secrets: TRACE_QUERY shows them). */
function queryKeys(query: string): string {
  return query
    .split('&')
    .map((pair) => `${pair.split('=', 1)[0]}=`)
    .join('&');
}
