import type { EventBus } from '../../shared/backends/event-bus.js';
import { poolSettingsOf } from '../../shared/services/target-pool-settings.js';
import type { Service, TargetHealthEntry, TargetHealthReport, TargetState } from '../../shared/types.js';

/** How long a report counts, in ms: one made, or received, longer ago than this is dropped. */
export const REPORT_MAX_AGE_MS = 60_000;

/** `GET /api/services/:id/health`: the service's targets, in the registry's order. */
export interface ServiceHealth {
  targets: TargetHealthView[];
}

/** One target: its registry settings, its overall state, and each proxy process's view of it. */
export interface TargetHealthView {
  url: string;
  /** The target's weight in the registry (1–100). */
  weight: number;
  /** Across {@link proxies}, by the rule of {@link overallState}. */
  state: TargetState;
  /** Every proxy process whose latest live report names this target, ordered by `proxy`. */
  proxies: ProxyTargetHealth[];
}

/** One proxy process's view of one target, from its latest report. */
export interface ProxyTargetHealth {
  /** The process: host name and process id (`web-1:4312`). */
  proxy: string;
  state: TargetState;
  /** Since when the target has been in `state` there: ISO 8601, UTC. */
  since: string;
  /** That process's latest failure of the target (`ECONNREFUSED`, `status 503`, `timeout`), or null. */
  lastError: string | null;
}

/** A report and when it arrived here, epoch ms. */
interface Received {
  report: TargetHealthReport;
  arrivedAt: number;
}

/**
 * What the proxy processes see of every service's targets (design.md §4.13, "Reports"), from the reports
 * they publish on the event bus every few seconds and on each change
 * (proxy/pool/target-health-reporter.ts). It keeps the latest report of each proxy process (by
 * `proxy`; one with an earlier `at` than the kept one, delivered out of order, is ignored) and
 * drops a report made more than {@link REPORT_MAX_AGE_MS} ago by its own `at` (so a proxy whose
 * clock is a minute behind counts as silent) or received more than that ago (a proxy stopped or cut
 * off: its last report ages out here, whatever its clock said).
 *
 * The overall state of a target ({@link overallState}):
 * - `unknown` when no live report names it, or every one that does says `unknown` (active checks on
 *   and none answered yet): nobody knows;
 * - `healthy` when every proxy that knows says `healthy`;
 * - else the most common of `unhealthy` (failing active checks) and `ejected` (outlier detection)
 *   among them, a tie counting as `unhealthy` (the stronger claim: the target fails the check
 *   meant to tell). One proxy in trouble with a target is enough to show it: proxies may reach a
 *   target differently (a host's network, say), and the per-proxy list says which.
 */
export class TargetHealthReports {
  readonly #latest = new Map<string, Received>();
  readonly #now: () => number;
  readonly #stop: () => void;

  /** Listens to `bus` until {@link close}; `now` (epoch ms) is the clock ages are read by. */
  constructor(bus: Pick<EventBus, 'onTargetHealth'>, now: () => number = Date.now) {
    this.#now = now;
    this.#stop = bus.onTargetHealth((report) => this.#receive(report));
  }

  /** The targets of `service` (its pool from the registry, in order) as the live reports see them. */
  of(service: Service): ServiceHealth {
    const reports = this.#live();
    const targets = poolSettingsOf(service).targets.map(({ url, weight }) => {
      const proxies = reports
        .map((report) => ({ proxy: report.proxy, entry: report.services[service.id]?.find((entry) => entry.url === url) }))
        .filter((seen): seen is { proxy: string; entry: TargetHealthEntry } => seen.entry !== undefined)
        .map(({ proxy, entry }) => ({ proxy, state: entry.state, since: new Date(entry.since).toISOString(), lastError: entry.lastError }));
      return { url, weight, state: overallState(proxies.map((proxy) => proxy.state)), proxies };
    });
    return { targets };
  }

  /** Stops listening; what was received stays readable. */
  close(): void {
    this.#stop();
  }

  #receive(report: TargetHealthReport): void {
    const now = this.#now();
    this.#prune(now);
    const kept = this.#latest.get(report.proxy);
    if (kept !== undefined && kept.report.at > report.at) return;
    if (isFresh(report.at, now)) this.#latest.set(report.proxy, { report, arrivedAt: now });
  }

  /** The live reports, ordered by `proxy`. */
  #live(): TargetHealthReport[] {
    this.#prune(this.#now());
    return [...this.#latest.values()].map(({ report }) => report).sort((a, b) => (a.proxy < b.proxy ? -1 : a.proxy > b.proxy ? 1 : 0));
  }

  /** Forgets every report too old by its `at` or its arrival. */
  #prune(now: number): void {
    for (const [proxy, { report, arrivedAt }] of this.#latest) {
      if (!isFresh(report.at, now) || !isFresh(arrivedAt, now)) this.#latest.delete(proxy);
    }
  }
}

/** Whether a time (epoch ms) is at most {@link REPORT_MAX_AGE_MS} before `now`. */
const isFresh = (at: number, now: number): boolean => now - at <= REPORT_MAX_AGE_MS;

/** A target's state across proxy processes, from each one's: the rule in {@link TargetHealthReports}'s comment. */
export function overallState(states: readonly TargetState[]): TargetState {
  const known = states.filter((state) => state !== 'unknown');
  if (known.length === 0) return 'unknown';
  const unhealthy = known.filter((state) => state === 'unhealthy').length;
  const ejected = known.filter((state) => state === 'ejected').length;
  if (unhealthy + ejected === 0) return 'healthy';
  return ejected > unhealthy ? 'ejected' : 'unhealthy';
}
