import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * A Prometheus counter whose value is read from `source` when scraped: for totals kept as plain
 * numbers where they are counted (prom-client's `inc` hashes its labels on every call).
 */
export function mirrorCount(registry: Registry, name: string, help: string, source: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(source());
    },
  });
}

/** A Prometheus gauge whose value is read from `source` when scraped. */
export function mirrorGauge(registry: Registry, name: string, help: string, source: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(source());
    },
  });
}
