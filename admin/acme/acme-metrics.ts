import { Counter, Gauge, type Registry } from 'prom-client';
import type { AcmeCertificates } from './acme-certificates.js';
import type { CertificateState } from './certificate-status.js';

const STATES: readonly CertificateState[] = ['pending', 'valid', 'failing', 'expired'];

/**
 * Certificates by ACME in `/metrics` of the admin port (design.md §4.15), read when scraped:
 * `gatehouse_acme_orders_total{outcome}` (`issued`, `failed`: orders since the process started)
 * and `gatehouse_acme_certificates{status}` (hosts by where their certificate stands:
 * certificate-status.ts).
 */
export function registerAcmeMetrics(registry: Registry, certificates: AcmeCertificates): void {
  new Counter({
    name: 'gatehouse_acme_orders_total',
    help: 'Certificate orders by ACME since the start, by outcome: issued, or failed (retried with backoff).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'issued' }, certificates.totals.issued);
      this.inc({ outcome: 'failed' }, certificates.totals.failed);
    },
  });
  new Gauge({
    name: 'gatehouse_acme_certificates',
    help: 'Hosts whose certificate ACME keeps, by status: pending (none yet), valid, failing (last order failed), expired.',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      const counts = new Map<CertificateState, number>(STATES.map((state) => [state, 0]));
      for (const entry of certificates.list()) counts.set(entry.status, counts.get(entry.status)! + 1);
      for (const [status, count] of counts) this.set({ status }, count);
    },
  });
}
