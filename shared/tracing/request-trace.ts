import type { IncomingMessage } from 'node:http';
import type { Attributes, Link, Span } from '@opentelemetry/api';
import { formatTraceParent, type TraceParent } from './trace-context.js';
import { newSpanId } from './random-ids.js';
import { SpanKind, type SpanExport } from './span-export.js';

/**
 * One request's place in a trace (design.md §3.10), made by the data plane for every request while
 * tracing is on. Its trace id is the caller's (continued) or new; `sampled` says whether its spans
 * are recorded, and only then does any span object exist. Whatever the request sends on (to a
 * target, to the admin process) carries a `traceparent` of this trace: naming a client span when
 * sampled, else one span id drawn for the request (W3C Trace Context §3.2, flags 00).
 */
export class RequestTrace {
  readonly traceId: string;
  readonly sampled: boolean;
  /** The caller's `tracestate` to pass on (only with a continued trace; trace-context.ts checked it). */
  readonly traceState: string | undefined;
  /** The server span, while sampled. */
  readonly span: Span | undefined;
  readonly #export: SpanExport | undefined;
  #unsampledSpanId: string | undefined;

  /**
   * `parent`: the caller's ids when its trace is continued; `link`: a caller's ids that were not
   * trusted, linked from the new trace instead (a client cannot choose the gateway's trace ids).
   * `spanExport` starts the server span `name` with `attributes` when `sampled`.
   */
  constructor(spanExport: SpanExport | undefined, traceId: string, sampled: boolean, context: { parent?: TraceParent; link?: TraceParent; traceState?: string }, name: string, attributes: Attributes) {
    this.traceId = traceId;
    this.sampled = sampled;
    this.traceState = context.traceState;
    this.#export = sampled ? spanExport : undefined;
    if (this.#export === undefined) return;
    const { parent, link } = context;
    const links: Link[] | undefined = link && [{ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.sampled ? 1 : 0, isRemote: true } }];
    this.span = this.#export.startSpan(name, SpanKind.SERVER, attributes, parent ? { traceId, spanId: parent.spanId, remote: true } : { traceId, remote: false }, links);
  }

  /** The server span's id, while sampled. */
  get spanId(): string | undefined {
    return this.span?.spanContext().spanId;
  }

  /** A child span of the server span, while sampled (undefined otherwise: nothing to record). */
  child(name: string, kind: SpanKind, attributes: Attributes): Span | undefined {
    return this.span && this.#export!.startSpan(name, kind, attributes, { span: this.span });
  }

  /** The `traceparent` of a request sent on: naming `span` (a client span of this request), else the request's own unsampled span id. */
  traceParent(span?: Span): string {
    if (span !== undefined) return formatTraceParent(this.traceId, span.spanContext().spanId, true);
    this.#unsampledSpanId ??= this.spanId ?? newSpanId();
    return formatTraceParent(this.traceId, this.#unsampledSpanId, this.sampled);
  }
}

/** Where a request's trace rides along inside one process (the embedded admin plane reads it there). */
const kTrace = Symbol('gatehouse.requestTrace');
type TraceCarrier = IncomingMessage & { [kTrace]?: RequestTrace };

/** Attaches `trace` to `req`, for whatever serves it further in this process. */
export function attachRequestTrace(req: IncomingMessage, trace: RequestTrace): void {
  (req as TraceCarrier)[kTrace] = trace;
}

/** The trace {@link attachRequestTrace} attached to `req`, if any. */
export function requestTraceOf(req: IncomingMessage): RequestTrace | undefined {
  return (req as TraceCarrier)[kTrace];
}
