import { SpanKind, type Attributes, type Link, type Span, type Tracer, ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, setGlobalErrorHandler, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, type IdGenerator, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../config/tracing-settings.js';
import type { Logger } from '../logger.js';
import { newSpanId, newTraceId } from './random-ids.js';

/** Spans waiting for export, at most (the SDK's BatchSpanProcessor `maxQueueSize`): past it new ones are dropped and counted. */
export const SPAN_QUEUE_SIZE = 8192;
/** Spans per OTLP request, at most. */
const EXPORT_BATCH_SIZE = 512;
/** How long spans wait to be sent with others, in ms. */
const EXPORT_DELAY_MS = 2000;
/** How long one export may take, retries included, in ms: also the longest a stop waits for the collector. */
const EXPORT_TIMEOUT_MS = 5000;

/** What an exporter's counts look like to `/metrics`. */
export interface SpanExportCounts {
  /** Spans handed to the exporter and accepted by the collector. */
  exported: number;
  /** Spans dropped: the queue full, or the collector refused or could not be reached. */
  dropped: number;
}

/**
 * The OpenTelemetry SDK as the gateway uses it (design.md §3.10): a tracer whose spans the
 * batch span processor sends over OTLP/HTTP (JSON), counted; one warning per collector outage.
 * The gateway decides sampling itself (sampler.ts) before any span exists, so the SDK's own sampler
 * keeps every span it is asked for, and a root span takes the trace id the gateway drew
 * (`startSpan`'s `traceId`).
 */
export class SpanExport {
  readonly counts: SpanExportCounts = { exported: 0, dropped: 0 };
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #ids = new ChosenIds();
  readonly #logger: Logger;
  /** Spans ended and not yet handed to the exporter (the processor's queue, as counted from outside it). */
  #queued = 0;

  constructor(settings: NonNullable<TracingSettings['export']> & { serviceName: string; resourceAttributes: Record<string, string> }, logger: Logger) {
    this.#logger = logger;
    const exporter = new CountingExporter(new OTLPTraceExporter({ url: settings.url.href, headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS }), this, logger);
    const processor = new BatchSpanProcessor(exporter, { maxQueueSize: SPAN_QUEUE_SIZE, maxExportBatchSize: EXPORT_BATCH_SIZE, scheduledDelayMillis: EXPORT_DELAY_MS });
    const counter = { onStart: () => undefined, onEnd: (span: ReadableSpan) => this.#ended(span, processor), forceFlush: () => processor.forceFlush(), shutdown: () => processor.shutdown() };
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName }),
      sampler: new AlwaysOnSampler(),
      idGenerator: this.#ids,
      spanProcessors: [counter],
    });
    this.#tracer = this.#provider.getTracer('gatehouse');
    // The SDK reports failed exports to the global error handler; CountingExporter logs them once per outage.
    setGlobalErrorHandler(() => undefined);
  }

  /**
   * A recording span. `parent`: the span it is a child of (in this process), or a remote caller's
   * ids (`traceId`/`spanId`, `remote`), or a new root with the trace id `traceId`.
   */
  startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: SpanParent, links?: Link[]): Span {
    return this.#tracer.startSpan(name, { kind, attributes, ...(links && { links }) }, this.#context(parent));
  }

  /**
   * Spans ended meanwhile are sent now; resolves when the collector answered or the export timed
   * out. Never rejects: a collector away at shutdown costs its spans (counted, logged), never the
   * rest of the stop.
   */
  async shutdown(): Promise<void> {
    try {
      await this.#provider.shutdown();
    } catch (error) {
      this.#logger.warn({ err: (error as Error)?.message }, 'the last spans could not be exported at shutdown');
    }
  }

  /** @internal CountingExporter: `spans` left the queue for the collector. */
  taken(spans: number): void {
    this.#queued = Math.max(0, this.#queued - spans);
  }

  #ended(span: ReadableSpan, processor: BatchSpanProcessor): void {
    if (this.#queued >= SPAN_QUEUE_SIZE) this.counts.dropped++;
    else this.#queued++;
    processor.onEnd(span);
  }

  #context(parent: SpanParent): Context {
    if ('span' in parent) return trace.setSpan(ROOT_CONTEXT, parent.span);
    if (parent.remote) return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    this.#ids.nextTraceId = parent.traceId;
    return ROOT_CONTEXT;
  }
}

/**
 * The span export `settings` ask for, named `defaultName` unless OTEL_SERVICE_NAME says otherwise;
 * undefined while OTEL_TRACES_EXPORTER is off (then no span object is ever made).
 */
export function openSpanExport(settings: TracingSettings, defaultName: string, logger: Logger): SpanExport | undefined {
  if (settings.export === undefined) return undefined;
  return new SpanExport({ ...settings.export, serviceName: settings.serviceName ?? defaultName, resourceAttributes: settings.resourceAttributes }, logger.child({ component: 'tracing' }));
}

/** Where a span hangs: under a span of this process, under a remote caller's, or at the root of `traceId`. */
export type SpanParent = { span: Span } | { traceId: string; spanId: string; remote: true } | { traceId: string; remote: false };

export { SpanKind };

/**
 * Ids for the SDK: a root span takes the trace id the gateway drew and sampled on (set right
 * before the SDK asks, on the same tick); span ids from the gateway's random pool.
 */
class ChosenIds implements IdGenerator {
  nextTraceId: string | undefined;

  generateTraceId(): string {
    const chosen = this.nextTraceId;
    this.nextTraceId = undefined;
    return chosen ?? newTraceId();
  }

  generateSpanId(): string {
    return newSpanId();
  }
}

/** The OTLP exporter, its results counted and an outage logged once, when it starts. */
class CountingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #owner: SpanExport;
  readonly #logger: Logger;
  #failing = false;

  constructor(inner: SpanExporter, owner: SpanExport, logger: Logger) {
    this.#inner = inner;
    this.#owner = owner;
    this.#logger = logger;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#owner.taken(spans.length);
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        this.#owner.counts.exported += spans.length;
        if (this.#failing) this.#logger.info('trace collector reachable again; spans are exported');
        this.#failing = false;
      } else {
        this.#owner.counts.dropped += spans.length;
        if (!this.#failing) this.#logger.warn({ err: result.error?.message }, 'trace collector unreachable; spans are dropped until it answers (counted in gatehouse_trace_spans_dropped_total)');
        this.#failing = true;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
