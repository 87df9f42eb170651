/**
 * A real OTLP/HTTP trace receiver for the tracing tests (not a test file itself): a node:http server
 * on 127.0.0.1 that decodes each `POST /v1/traces` as the OTLP/JSON `ExportTraceServiceRequest`
 * `@opentelemetry/exporter-trace-otlp-http` sends (ids as hex, OTLP specification "JSON Protobuf
 * Encoding"; gzip bodies too) into a flat list of spans, and answers `200 {}`. For a collector
 * outage it answers 503 to every POST while {@link OtlpTraceReceiver.refusing} (the spans of a
 * refused POST are not kept). Tests wait on its POSTs (event-driven), never on a clock.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { closeServer, listen } from './listen.js';
import { Recorder } from './recorder.js';

/** One OTLP/JSON `AnyValue` as the JSON serializer writes it. */
interface JsonValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  bytesValue?: string;
  arrayValue?: { values?: JsonValue[] };
  kvlistValue?: { values?: JsonAttributes };
}
type JsonAttributes = Array<{ key: string; value: JsonValue }>;
interface JsonLink {
  traceId: string;
  spanId: string;
  traceState?: string;
  attributes?: JsonAttributes;
  flags?: number;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes?: JsonAttributes;
  links?: JsonLink[];
  status?: { code?: number; message?: string };
  flags?: number;
}
interface JsonTracesRequest {
  resourceSpans?: Array<{ resource?: { attributes?: JsonAttributes }; scopeSpans?: Array<{ scope?: { name?: string }; spans?: JsonSpan[] }> }>;
}

/** An attribute value as a test compares it (arrays of them for `arrayValue`). */
export type AttributeValue = string | number | boolean | AttributeValue[];
export type AttributeMap = Record<string, AttributeValue>;

/** OTLP's `Span.SpanKind`, by name (the JSON carries its number). */
export type SpanKindName = 'UNSPECIFIED' | 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER';
const KIND_NAMES: readonly SpanKindName[] = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];

/** A span link as received: the linked span's ids (hex) and the link's attributes. */
export interface ReceivedLink {
  traceId: string;
  spanId: string;
  attributes: AttributeMap;
}

/** One span as received, its attributes and its resource's flattened to plain objects. */
export interface ReceivedSpan {
  /** 32 lowercase hex characters. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  /** The parent's span id; undefined for a root span (the JSON's empty or absent field). */
  parentSpanId: string | undefined;
  name: string;
  kind: SpanKindName;
  attributes: AttributeMap;
  links: ReceivedLink[];
  /** The resource's attributes (`service.name`, OTEL_RESOURCE_ATTRIBUTES…). */
  resource: AttributeMap;
  /** The instrumentation scope's name. */
  scope: string;
  /** OTLP `Status.code`: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  traceState: string | undefined;
}

/** One POST to `/v1/traces`: how many spans it carried and the status it was answered. */
export interface ReceivedTraceRequest {
  spans: number;
  status: number;
}

function valueOf(value: JsonValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return JSON.stringify(value);
}

const flatten = (attributes: JsonAttributes = []): AttributeMap => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/** The receiver. {@link OtlpTraceReceiver.start} it; set {@link refusing} for an outage. */
export class OtlpTraceReceiver {
  #server: Server | undefined;
  #port = 0;
  /** Every span of the POSTs answered 200, in arrival order. */
  readonly spans: ReceivedSpan[] = [];
  /** Every POST to `/v1/traces` answered, in arrival order. */
  readonly requests: ReceivedTraceRequest[] = [];
  /** Told the number of POSTs answered, after each. */
  readonly #answered = new Recorder<number>();
  /** While true every POST is answered 503 (a collector that is down), its spans not kept. */
  refusing = false;

  private constructor() {}

  /** Starts a receiver on a free port of 127.0.0.1. */
  static async start(): Promise<OtlpTraceReceiver> {
    const receiver = new OtlpTraceReceiver();
    const server = createServer((request, response) => void receiver.#receive(request, response));
    receiver.#port = await listen(server, 0, '127.0.0.1');
    receiver.#server = server;
    return receiver;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT should be: `http://127.0.0.1:<port>` (the exporter adds `/v1/traces`). */
  get endpoint(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** The spans of trace `traceId` received so far. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  /**
   * Resolves with the first value `find` returns that is not undefined, asked now and after each
   * POST answered; rejects after `timeoutMs` naming `what`. The exporter sends every 2 s at most
   * (shared/tracing/span-export.ts), hence the generous default.
   */
  async waitFor<T>(what: string, find: (receiver: OtlpTraceReceiver) => T | undefined, timeoutMs = 20_000): Promise<T> {
    let found = find(this);
    if (found !== undefined) return found;
    await this.#answered.next(() => (found = find(this)) !== undefined, timeoutMs).catch((error: Error) => {
      throw new Error(`OTLP trace receiver: ${what}: ${error.message}; ${this.spans.length} spans so far: ${this.spans.map((span) => span.name).join(', ')}`);
    });
    return found!;
  }

  /** Resolves with the spans of trace `traceId` once `holds` is true of them (see {@link waitFor}). */
  waitForTrace(traceId: string, what: string, holds: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]> {
    return this.waitFor(`trace ${traceId}: ${what}`, () => {
      const spans = this.trace(traceId);
      return holds(spans) ? spans : undefined;
    }, timeoutMs);
  }

  /** Resolves once `count` more POSTs than `after` were answered (whatever their status). */
  waitForRequests(after: number, count: number, timeoutMs?: number): Promise<ReceivedTraceRequest[]> {
    return this.waitFor(`${count} POSTs after the first ${after}`, () => (this.requests.length >= after + count ? this.requests.slice(after) : undefined), timeoutMs);
  }

  /** Stops for good. */
  async close(): Promise<void> {
    if (this.#server) await closeServer(this.#server);
    this.#server = undefined;
  }

  async #receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of request) chunks.push(chunk as Buffer);
    } catch {
      return; // the connection went away mid-body: nothing was answered
    }
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    let body: JsonTracesRequest;
    try {
      const raw = Buffer.concat(chunks);
      body = JSON.parse((request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')) as JsonTracesRequest;
    } catch {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"not OTLP/JSON"}');
      return;
    }
    const spans = decode(body);
    const status = this.refusing ? 503 : 200;
    if (status === 200) this.spans.push(...spans);
    this.requests.push({ spans: spans.length, status });
    response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    this.#answered.listener(this.requests.length);
  }
}

/** The spans of an `ExportTraceServiceRequest`, each with its resource and scope. */
function decode(body: JsonTracesRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const { resource, scopeSpans } of body.resourceSpans ?? []) {
    const resourceAttributes = flatten(resource?.attributes);
    for (const { scope, spans: scoped } of scopeSpans ?? []) {
      for (const span of scoped ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: KIND_NAMES[span.kind] ?? 'UNSPECIFIED',
          attributes: flatten(span.attributes),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId, attributes: flatten(link.attributes) })),
          resource: resourceAttributes,
          scope: scope?.name ?? '',
          statusCode: span.status?.code ?? 0,
          traceState: span.traceState || undefined,
        });
      }
    }
  }
  return spans;
}
