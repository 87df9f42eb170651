import type { Span } from '@opentelemetry/api';
import type { CustomFetch } from 'openid-client';
import { formatTraceParent } from '../../shared/tracing/trace-context.js';
import { SpanKind, type SpanExport } from '../../shared/tracing/span-export.js';
import { withinSpan } from './admin-tracing.js';
import { markFailed } from '../../shared/tracing/server-span.js';

/**
 * A fetch for openid-client (its `customFetch`) that records each request to the identity provider
 * (discovery, the token endpoint, JWKS, userinfo, revocation) as a CLIENT span under `parent`,
 * after OpenTelemetry's HTTP client semantic conventions: named by its method (`POST`), with
 * `http.request.method`, `server.address`, `server.port`, `url.full` without query or fragment
 * (so never a token or a code) and `http.response.status_code`; `error.type` is the status from 400
 * on, or the failure's code when no answer came. The request carries a `traceparent` naming the
 * span (W3C Trace Context §3.2), so a provider that traces continues the trace.
 */
export function tracedFetch(spanExport: SpanExport, parent: Span): CustomFetch {
  return (url, options) => {
    const target = new URL(url);
    const span = spanExport.startSpan(options.method, SpanKind.CLIENT, {
      'http.request.method': options.method,
      'server.address': target.hostname.replace(/^\[(.*)\]$/, '$1'),
      'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
      'url.full': target.origin + target.pathname,
    }, { span: parent });
    const { traceId, spanId } = span.spanContext();
    const headers = { ...options.headers, traceparent: formatTraceParent(traceId, spanId, true) };
    return withinSpan(span, async () => {
      const response = await fetch(url, { ...options, headers });
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 400) markFailed(span, String(response.status));
      return response;
    });
  };
}
