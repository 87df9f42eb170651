import type { CertificateRow } from './acme-rows.js';

/**
 * Where a host's certificate stands: `pending` (none yet, the first order under way or due),
 * `valid` (one served, the last order succeeded), `failing` (the last order failed: retried with
 * backoff, a certificate still served if one is), `expired` (the one held has expired).
 */
export type CertificateState = 'pending' | 'valid' | 'failing' | 'expired';

/** One entry of `GET /api/certificates` and of the console's Certificates page; times ISO 8601 UTC. */
export interface CertificateStatus {
  host: string;
  /** The issuing CA's common name; null before the first certificate. */
  issuer: string | null;
  notAfter: string | null;
  /** When the next order is due: the renewal time, or the retry after a failure; null while one is due now. */
  nextRenewal: string | null;
  /** Why the last order failed (the CA's problem or the network's error); null after a success. */
  lastError: string | null;
  status: CertificateState;
}

/** The status of `row` at `now` (epoch ms). */
export function certificateStatus(row: CertificateRow, now: number): CertificateStatus {
  const due = nextOrderTime(row);
  return {
    host: row.host,
    issuer: row.issuer,
    notAfter: iso(row.notAfter),
    nextRenewal: due > now ? iso(due) : null,
    lastError: row.lastError,
    status: stateOf(row, now),
  };
}

/** When `row`'s next order is due, epoch ms (0: now): its renewal time, or its retry time after a failure, whichever is later. */
export function nextOrderTime(row: CertificateRow): number {
  return Math.max(row.certPem === null ? 0 : (row.renewAt ?? 0), row.retryAt ?? 0);
}

function stateOf(row: CertificateRow, now: number): CertificateState {
  if (row.certPem !== null && (row.notAfter ?? 0) <= now) return 'expired';
  if (row.lastError !== null) return 'failing';
  return row.certPem === null ? 'pending' : 'valid';
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
