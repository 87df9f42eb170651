/**
 * The tracing bench's collector: a node:http server in the bench process answering `200 {}` to
 * each OTLP/JSON `POST /v1/traces` (what `@opentelemetry/exporter-trace-otlp-http` sends) and
 * counting the spans it carried by the resource's `service.name`, keeping nothing else, so that a
 * run of millions of spans costs it no memory.
 */
import { createServer } from 'node:http';
import { closeServer, listen } from '../../test/support/listen.js';

interface TracesRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: unknown[] }>;
  }>;
}

export interface SpanCounter {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the gateway: `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** Spans received so far by `service.name`. */
  spans(serviceName: string): number;
  close(): Promise<void>;
}

/** Starts the counter on a free port of 127.0.0.1. */
export async function startSpanCounter(): Promise<SpanCounter> {
  const counts = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        count(JSON.parse(Buffer.concat(chunks).toString('utf8')) as TracesRequest, counts);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      }
    });
  });
  const port = await listen(server, 0, '127.0.0.1');
  return { endpoint: `http://127.0.0.1:${port}`, spans: (name) => counts.get(name) ?? 0, close: () => closeServer(server) };
}

function count(body: TracesRequest, counts: Map<string, number>): void {
  for (const { resource, scopeSpans } of body.resourceSpans ?? []) {
    const name = resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
    const spans = (scopeSpans ?? []).reduce((sum, scope) => sum + (scope.spans?.length ?? 0), 0);
    counts.set(name, (counts.get(name) ?? 0) + spans);
  }
}
