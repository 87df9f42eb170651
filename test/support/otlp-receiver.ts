/**
 * A real OTLP/HTTP log receiver for tests of the access-log export (not a test file itself): a
 * node:http server on 127.0.0.1 that decodes each `POST /v1/logs` as OTLP/JSON, answers `200 {}`
 * (or the answers a test scripted: a 503 with Retry-After, a 400, a partial success) and keeps each
 * POST's headers, arrival time and answer, and the log records of those it answered 2xx. It can be
 * stopped (its port then refuses connections) and started again on the same port, standing in for
 * a collector that is down and comes back.
 */
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { closeServer, listen } from './listen.js';
import { Recorder } from './recorder.js';

/** One OTLP/JSON `AnyValue` as the JSON serializer writes them (strings and ints here). */
interface JsonValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
type JsonAttributes = Array<{ key: string; value: JsonValue }>;
interface JsonLogRecord {
  timeUnixNano: string;
  observedTimeUnixNano?: string;
  severityNumber: number;
  severityText: string;
  body: JsonValue;
  attributes: JsonAttributes;
  traceId?: string;
  spanId?: string;
  flags?: number;
}
interface JsonLogsRequest {
  resourceLogs: Array<{ resource: { attributes: JsonAttributes }; scopeLogs: Array<{ scope: { name: string }; logRecords: JsonLogRecord[] }> }>;
}

/** A log record as received: its attributes (and its resource's) flattened to an object. */
export interface ReceivedLogRecord {
  /** `log.record.uid`: the access-log record's event id. */
  uid: string;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  scope: string;
  /** The body's `stringValue` (undefined when the body is not a string). */
  body: string | undefined;
  severityNumber: number;
  severityText: string;
  timeUnixNano: string;
  observedTimeUnixNano: string | undefined;
  /** The trace the record belongs to (hex in OTLP/JSON), its span and trace flags; undefined when not sent. */
  traceId: string | undefined;
  spanId: string | undefined;
  flags: number | undefined;
}

/** One POST the receiver answered: its headers, when it arrived, how many log records it carried and the status it got. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** `Date.now()` once its body had arrived. */
  at: number;
  /** How many log records it carried (kept only when `status` is 2xx). */
  records: number;
  status: number;
}

/** An answer the receiver gives a POST instead of its default `200 {}` (see {@link OtlpReceiver.answers}). */
export interface OtlpAnswer {
  status: number;
  /** Added to `content-type: application/json`, such as `retry-after`. */
  headers?: Record<string, string>;
  /** The body; `{}` when absent. A 2xx body may hold a `partialSuccess`. */
  body?: string;
}

function valueOf(value: JsonValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

const flatten = (attributes: JsonAttributes = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/** The receiver. {@link OtlpReceiver.start} it; {@link stop} and {@link resume} for an outage. */
export class OtlpReceiver {
  #server: Server | undefined;
  #port = 0;
  /** Every log record of the POSTs answered 2xx, duplicates included, in arrival order. */
  readonly received: ReceivedLogRecord[] = [];
  /** The distinct records of the POSTs answered 2xx, by `log.record.uid` (a re-delivery replaces nothing: the first is kept). */
  readonly records = new Map<string, ReceivedLogRecord>();
  /** Every POST to `/v1/logs` of OTLP/JSON answered (whatever the status), in arrival order. */
  readonly requests: ReceivedRequest[] = [];
  /** Told the number of distinct records after each POST answered. */
  readonly distinct = new Recorder<number>();
  /**
   * Answers to give the next POSTs, one each, in order (push to script them); once it is empty,
   * `200 {}`. The records of a POST are kept only when its answer is 2xx.
   */
  readonly answers: OtlpAnswer[] = [];

  private constructor() {}

  /** Starts a receiver on `port` of 127.0.0.1 (0: a free one). */
  static async start(port = 0): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await receiver.#listen(port);
    return receiver;
  }

  /** Its port: the same across {@link stop} and {@link resume}. */
  get port(): number {
    return this.#port;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT should be: `http://127.0.0.1:<port>` (the exporter adds `/v1/logs`). */
  get endpoint(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Whether it is listening (not stopped). */
  get up(): boolean {
    return this.#server?.listening ?? false;
  }

  /** The distinct records whose `url.path` starts with `prefix`. */
  withPathPrefix(prefix: string): ReceivedLogRecord[] {
    return [...this.records.values()].filter((record) => String(record.attributes['url.path']).startsWith(prefix));
  }

  /** Resolves once `holds` is true of the receiver after a POST (or already is); rejects after `timeoutMs`. */
  async until(what: string, holds: (receiver: OtlpReceiver) => boolean, timeoutMs = 10_000): Promise<void> {
    if (holds(this)) return;
    await this.distinct.next(() => holds(this), timeoutMs).catch((error: Error) => {
      throw new Error(`OTLP receiver: ${what}: ${error.message}; ${this.records.size} distinct records so far`);
    });
  }

  /** Closes the port (connections to it are then refused) and drops open connections. */
  async stop(): Promise<void> {
    if (this.#server) await closeServer(this.#server);
    this.#server = undefined;
  }

  /** Listens again on the same port. */
  async resume(): Promise<void> {
    if (this.up) return;
    await this.#listen(this.#port);
  }

  /** Stops for good (same as {@link stop}). */
  close(): Promise<void> {
    return this.stop();
  }

  async #listen(port: number): Promise<void> {
    const server = createServer((request, response) => void this.#receive(request, response));
    this.#port = await listen(server, port, '127.0.0.1');
    this.#server = server;
  }

  async #receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of request) chunks.push(chunk as Buffer);
    } catch {
      return; // the connection went away mid-body: nothing was answered, so nothing was taken
    }
    if (request.method !== 'POST' || request.url !== '/v1/logs') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    let body: JsonLogsRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonLogsRequest;
    } catch {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"not JSON"}');
      return;
    }
    const at = Date.now();
    const answer = this.answers.shift() ?? { status: 200 };
    const records = this.#decode(body);
    if (answer.status >= 200 && answer.status < 300) {
      for (const record of records) {
        this.received.push(record);
        if (!this.records.has(record.uid)) this.records.set(record.uid, record);
      }
    }
    this.requests.push({ path: request.url, headers: request.headers, at, records: records.length, status: answer.status });
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '{}');
    this.distinct.listener(this.records.size);
  }

  /** The request's log records. */
  #decode(request: JsonLogsRequest): ReceivedLogRecord[] {
    const records: ReceivedLogRecord[] = [];
    for (const { resource, scopeLogs } of request.resourceLogs ?? []) {
      for (const { scope, logRecords } of scopeLogs ?? []) {
        for (const record of logRecords ?? []) {
          const attributes = flatten(record.attributes);
          records.push({
            uid: String(attributes['log.record.uid']),
            attributes,
            resource: flatten(resource?.attributes),
            scope: scope?.name ?? '',
            body: record.body?.stringValue,
            severityNumber: record.severityNumber,
            severityText: record.severityText,
            timeUnixNano: record.timeUnixNano,
            observedTimeUnixNano: record.observedTimeUnixNano,
            traceId: record.traceId,
            spanId: record.spanId,
            flags: record.flags,
          });
        }
      }
    }
    return records;
  }
}
