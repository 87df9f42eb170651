/**
 * Compares what the clients received with what the access log stored: every response a client got
 * must be in the log exactly once (README "Running a fleet": nothing lost across a failover, nothing doubled).
 * Records are read through the admin API (`GET /api/services/:id/logs?path=<tag>`, every page).
 */
import { apiClient } from '../../support/api-client.js';
import { eventually } from '../../support/eventually.js';
import type { LoadOutcome } from './load-client.js';

/** What the log holds against what the clients got. */
export interface AccessLogAudit {
  /** Responses the clients received (any status). */
  received: number;
  /** Records stored for the load's markers (duplicates counted). */
  stored: number;
  /** Markers of received responses with no record. */
  missing: string[];
  /** Markers with more than one record. */
  duplicated: string[];
  /** How long the admin took to have every received response stored, in ms (or the wait's limit). */
  caughtUpMs: number;
}

/** How many records each marker `<tag>-<n>` has in service `serviceId`'s access log. */
async function storedMarkers(adminUrl: string, admin: { cookie: string; csrfToken: string }, serviceId: string, tag: string): Promise<Map<string, number>> {
  const call = apiClient(adminUrl);
  const counts = new Map<string, number>();
  const pattern = new RegExp(`${tag}-\\d+`);
  for (let offset = 0; ; offset += 1_000) {
    const page = await call('GET', `/api/services/${serviceId}/logs?path=${encodeURIComponent(`${tag}-`)}&limit=1000&offset=${offset}`, { as: admin });
    if (page.status !== 200) throw new Error(`access log: ${page.status} ${page.text}`);
    const logs = page.json.logs as Array<{ path: string }>;
    for (const log of logs) {
      const marker = pattern.exec(log.path)?.[0];
      if (marker !== undefined) counts.set(marker, (counts.get(marker) ?? 0) + 1);
    }
    if (logs.length < 1_000) return counts;
  }
}

/**
 * Waits (up to `timeoutMs`) for every response in `outcomes` to be stored, then counts: what is
 * missing then is reported, not thrown, for the test to assert and print.
 */
export async function auditAccessLog(
  adminUrl: string,
  admin: { cookie: string; csrfToken: string },
  serviceId: string,
  tag: string,
  outcomes: readonly LoadOutcome[],
  timeoutMs = 30_000,
): Promise<AccessLogAudit> {
  const received = outcomes.filter((outcome) => outcome.status !== undefined).map((outcome) => outcome.marker);
  let counts = new Map<string, number>();
  const caughtUpMs = await eventually('every received response in the access log', async () => {
    counts = await storedMarkers(adminUrl, admin, serviceId, tag);
    return received.every((marker) => counts.has(marker));
  }, timeoutMs, 500).catch(() => timeoutMs);
  // Records still arriving (of requests the clients never got an answer to) would count twice on a shifting page.
  counts = await storedMarkers(adminUrl, admin, serviceId, tag);
  return {
    received: received.length,
    stored: [...counts.values()].reduce((sum, count) => sum + count, 0),
    missing: received.filter((marker) => !counts.has(marker)),
    duplicated: [...counts].filter(([, count]) => count > 1).map(([marker]) => marker),
    caughtUpMs,
  };
}
