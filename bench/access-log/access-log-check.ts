/**
 * The access-log check: every request a gateway served has exactly one stored access-log record.
 *
 * Three counts per service:
 * - `responses`: responses the clients received (2xx + non-2xx), over every run against the
 *   service, warm-ups and readiness probes included;
 * - `inFlightAtStop`: at most how many requests were still in flight when a run stopped. A
 *   duration-bound autocannon run ends by closing its connections with up to one request in
 *   flight on each; the gateway may still have answered those (a record with their status) or
 *   seen the client leave (a record with 499), but no client counted them. Per run it is the
 *   smaller of requests written minus responses and the connection count (autocannon's count of
 *   requests written is exact for closed-loop runs, but over-counts by about one second's worth
 *   for rated ones);
 * - `served`: the gateway's own count of finished requests (`gatehouse_requests_total`), taken
 *   at the same point (the response's close) that writes the record.
 * The check passes when responses ≤ stored ≤ responses + inFlightAtStop (every answered request
 * is stored; nothing is stored that no client sent) and, when the gateway's /metrics could be
 * read, stored = served (exactly one record per finished request).
 */

/** What the clients counted for one service. */
export interface ClientCounts {
  responses: number;
  /** Upper bound of requests cut off when runs stopped (see the module comment). */
  inFlightAtStop: number;
}

export interface AccessLogCheck {
  stack: string;
  service: string;
  responses: number;
  inFlightAtStop: number;
  /** The gateway's `gatehouse_requests_total`, or null if its /metrics could not be read. */
  served: number | null;
  /** Why `served` is null. */
  servedError?: string;
  stored: number;
  /** stored − responses: requests cut off when a run stopped, or lost (if negative). */
  cutOffAtStop: number;
  pass: boolean;
}

/** Client-side counts per stack and service, filled as runs finish. */
export class ClientLedger {
  readonly #counts = new Map<string, ClientCounts>();

  /** Adds one run's counts for `serviceId` on `stack`. */
  add(stack: string, serviceId: string, counts: ClientCounts): void {
    const key = `${stack}\u0000${serviceId}`;
    const total = this.#counts.get(key) ?? { responses: 0, inFlightAtStop: 0 };
    total.responses += counts.responses;
    total.inFlightAtStop += counts.inFlightAtStop;
    this.#counts.set(key, total);
  }

  /** The counts for `serviceId` on `stack` (zeros when no run touched it). */
  get(stack: string, serviceId: string): ClientCounts {
    return this.#counts.get(`${stack}\u0000${serviceId}`) ?? { responses: 0, inFlightAtStop: 0 };
  }
}

/** Compares one service's counts (see the module comment for the rule). */
export function checkAccessLog(
  stack: string,
  service: { id: string; path: string },
  client: ClientCounts,
  served: number | { error: string },
  stored: number,
): AccessLogCheck {
  const servedCount = typeof served === 'number' ? served : null;
  const pass = (servedCount === null || stored === servedCount) && client.responses <= stored && stored <= client.responses + client.inFlightAtStop;
  return {
    stack,
    service: service.path,
    responses: client.responses,
    inFlightAtStop: client.inFlightAtStop,
    served: servedCount,
    ...(typeof served === 'number' ? {} : { servedError: served.error }),
    stored,
    cutOffAtStop: stored - client.responses,
    pass,
  };
}
