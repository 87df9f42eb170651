import { Counter, type Registry } from 'prom-client';
import type { SpanExportCounts } from './span-export.js';

/**
 * `gatehouse_trace_spans_exported_total` and `gatehouse_trace_spans_dropped_total` (the queue full, or
 * the collector refusing or away) of a process's span export (design.md §3.10), read when scraped.
 */
export function registerSpanExportMetrics(registry: Registry, counts: SpanExportCounts): void {
  const registers = [registry];
  new Counter({
    name: 'gatehouse_trace_spans_exported_total',
    help: 'Spans the trace collector accepted.',
    registers,
    collect() {
      this.reset();
      this.inc(counts.exported);
    },
  });
  new Counter({
    name: 'gatehouse_trace_spans_dropped_total',
    help: 'Spans dropped: the export queue full, or the collector refusing them or unreachable.',
    registers,
    collect() {
      this.reset();
      this.inc(counts.dropped);
    },
  });
}
