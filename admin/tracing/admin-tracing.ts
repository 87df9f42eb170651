import type { Attributes, Span } from '@opentelemetry/api';
import type { TracingSettings } from '../../shared/config/tracing-settings.js';
import { describeError, errorCode } from '../../shared/error-code.js';
import type { Logger } from '../../shared/logger.js';
import { newTraceId } from '../../shared/tracing/random-ids.js';
import { RequestTrace } from '../../shared/tracing/request-trace.js';
import { createSampler, type Sampler } from '../../shared/tracing/sampler.js';
import { openSpanExport, type SpanExport, type SpanKind } from '../../shared/tracing/span-export.js';
import type { TraceParent } from '../../shared/tracing/trace-context.js';
import { markFailed } from '../../shared/tracing/server-span.js';

/**
 * How long a close waits for the last spans to reach the collector, in ms: a process's stop is
 * bounded (README "Stopping"), and a collector that does not answer would hold it for the
 * exporter's 10 s timeout.
 */
const CLOSE_WAIT_MS = 2_000;

/**
 * The admin process's side of tracing (design.md §3.10): its span export (the process's own, or in
 * the embedded process the one both planes share) and the sampler (OTEL_TRACES_SAMPLER) that decides,
 * before any span exists, which traces the admin starts or continues are recorded. While
 * OTEL_TRACES_EXPORTER is off every method gives undefined and no span object is ever made.
 */
export class AdminTracing {
  /** Tracing off: no span export, no span. */
  static readonly OFF = new AdminTracing(undefined, { name: 'always_off', ratio: 0 });

  /** The span export; undefined while tracing is off. */
  readonly spanExport: SpanExport | undefined;
  readonly #sampler: Sampler | undefined;

  constructor(spanExport: SpanExport | undefined, sampler: TracingSettings['sampler']) {
    this.spanExport = spanExport;
    this.#sampler = spanExport && createSampler(sampler.name, sampler.ratio);
  }

  /**
   * Opens the span export `settings` ask for, its `service.name` `defaultName` unless
   * OTEL_SERVICE_NAME says otherwise (`gatehouse-admin`, or `gatehouse` for the embedded process).
   */
  static open(settings: TracingSettings, defaultName: string, logger: Logger): AdminTracing {
    return new AdminTracing(openSpanExport(settings, defaultName, logger), settings.sampler);
  }

  /** Whether tracing is on (OTEL_TRACES_EXPORTER=otlp). */
  get on(): boolean {
    return this.spanExport !== undefined;
  }

  /**
   * A span at the root of a new trace, when the sampler keeps that trace (as a root: no parent
   * decided); undefined otherwise. For the work the admin starts itself: a refresh, a batch stored.
   */
  startRoot(name: string, kind: SpanKind, attributes: Attributes): Span | undefined {
    if (this.spanExport === undefined) return undefined;
    const traceId = newTraceId();
    return this.#sampler!(traceId, undefined) ? this.spanExport.startSpan(name, kind, attributes, { traceId, remote: false }) : undefined;
  }

  /** A child span of `parent` (undefined while `parent` is: its trace is not recorded). */
  startChild(parent: Span | undefined, name: string, kind: SpanKind, attributes: Attributes): Span | undefined {
    return parent && this.spanExport?.startSpan(name, kind, attributes, { span: parent });
  }

  /**
   * A request's trace (tracing on): `parent`'s when given (continued, its sampled flag followed by a
   * parent-based sampler), else a new one that links to `link` (a caller not trusted to choose the
   * trace). Its server span `name` gets `attributes()`, asked only when the trace is sampled.
   */
  requestTrace(context: { parent?: TraceParent; link?: TraceParent }, name: string, attributes: () => Attributes): RequestTrace {
    const traceId = context.parent?.traceId ?? newTraceId();
    const sampled = this.#sampler!(traceId, context.parent?.sampled);
    return new RequestTrace(this.spanExport, traceId, sampled, context, name, sampled ? attributes() : {});
  }

  /**
   * Ends the span export once its last spans are sent, or after {@link CLOSE_WAIT_MS} without the
   * collector's answer; never rejects (a failed export is counted and logged by the span export).
   * Call after everything that makes spans has stopped.
   */
  async close(): Promise<void> {
    if (this.spanExport === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS).unref()));
    await Promise.race([this.spanExport.shutdown().catch(() => undefined), waited]);
    clearTimeout(timer);
  }
}

/**
 * Runs `work` as `span`'s: the span ends when `work` settles, marked as an error (with `error.type`,
 * the error's code or name, OpenTelemetry's error attribute) when it rejects. Without a span, `work`
 * runs alone.
 */
export async function withinSpan<T>(span: Span | undefined, work: () => Promise<T>): Promise<T> {
  if (span === undefined) return work();
  try {
    return await work();
  } catch (error) {
    markFailed(span, errorCode(error) ?? describeError(error).name);
    throw error;
  } finally {
    span.end();
  }
}
