import type { HealthCheck, OutlierDetection, TargetHealthEntry, TargetState } from '../../shared/types.js';

/** The longest an ejection lasts however often it repeats, in ms, unless `ejectSeconds` is longer (Envoy's max_ejection_time). */
const MAX_EJECTION_MS = 300_000;

/** Told of every change of a target's state, once per change. */
export type TargetStateListener = (health: TargetHealth, previous: TargetState) => void;

/**
 * One target of one service as this proxy process sees it: its state, the failures outlier
 * detection counts, the active checks' streaks, and its counts for `/metrics`. Kept across registry
 * snapshots (by service id and url: target-health-book.ts), so renaming a service or reweighing a
 * target forgets nothing.
 *
 * States (`GET /api/services/:id/health`): `unhealthy` after `unhealthyThreshold` failed active
 * checks in a row, until `healthyThreshold` passing ones; `ejected` by outlier detection for a
 * while; `unknown` while active checks are on and none has answered yet; else `healthy`. An
 * ejection ends at once when an active check passes (as Envoy does). A target that is neither
 * unhealthy nor ejected is {@link available}: `unknown` ones take traffic, as new hosts do in
 * Envoy, so a pool with checks turned on does not stop while the first probes run.
 */
export class TargetHealth {
  readonly serviceId: string;
  readonly url: string;
  #requests = 0;
  #errors = 0;
  #active = 0;
  #state: TargetState;
  #since = Date.now();
  #lastError: string | null = null;
  #outlier: OutlierDetection;
  #checked: boolean;
  /** Times of the latest failures (epoch ms), at most `maxFails` of them, oldest first. */
  #failures: number[] = [];
  #ejectedUntil = 0;
  /** Ejections in a run: the next lasts `ejectSeconds × 2^ejections`, capped. */
  #ejections = 0;
  /** When the latest ejection ended, epoch ms. */
  #ejectionEndedAt = 0;
  #passes = 0;
  #fails = 0;
  #unhealthy = false;
  /** Whether an active check has answered since checks were turned on. */
  #answered = false;
  readonly #onChange: TargetStateListener;

  constructor(serviceId: string, url: string, outlier: OutlierDetection, checked: boolean, onChange: TargetStateListener) {
    this.serviceId = serviceId;
    this.url = url;
    this.#outlier = outlier;
    this.#checked = checked;
    this.#state = checked ? 'unknown' : 'healthy';
    this.#onChange = onChange;
  }

  get state(): TargetState {
    if (this.#ejectedUntil !== 0) this.#expireEjection(Date.now());
    return this.#state;
  }

  /** Requests sent to this target (retries too), for `/metrics`. */
  get requests(): number {
    return this.#requests;
  }

  /** Of {@link requests}, how many failed (connection failure, 502/503/504, timeout), for `/metrics`. */
  get errors(): number {
    return this.#errors;
  }

  /** Requests in flight to this target, for `least_requests`. */
  get active(): number {
    return this.#active;
  }

  /** A request is being sent to this target: counted, and in flight until {@link requestSettled}. */
  requestSent(): void {
    this.#requests++;
    this.#active++;
  }

  /** A request sent to this target is done (answered, failed or aborted): no longer in flight. */
  requestSettled(): void {
    this.#active--;
  }

  /** Neither failed by active checks nor ejected: a balancer may choose it. */
  get available(): boolean {
    const state = this.state;
    return state !== 'unhealthy' && state !== 'ejected';
  }

  /** Takes a new snapshot's settings; turning active checks off forgets their verdict. */
  configure(outlier: OutlierDetection, healthCheck: HealthCheck | null): void {
    this.#outlier = outlier;
    const checked = healthCheck !== null;
    if (checked === this.#checked) return;
    this.#checked = checked;
    this.#unhealthy = this.#answered = false;
    this.#passes = this.#fails = 0;
    this.#settle(Date.now());
  }

  /**
   * A request to this target failed (connection failure, 502/503/504, timeout): `error` says how.
   * The `maxFails`-th failure within `windowSeconds` ejects the target, unless `mayEject` says no
   * (it is the pool's last available target: a pool never fails closed on its own judgement).
   */
  failed(error: string, mayEject: () => boolean): void {
    const now = Date.now();
    this.#errors++;
    this.#lastError = error;
    const { maxFails, windowSeconds, ejectSeconds } = this.#outlier;
    this.#failures.push(now);
    if (this.#failures.length > maxFails) this.#failures.splice(0, this.#failures.length - maxFails);
    if (this.#failures.length < maxFails || now - this.#failures[0]! > windowSeconds * 1000) return;
    if (this.#ejectedUntil !== 0) this.#expireEjection(now);
    if (this.#ejectedUntil > now || !mayEject()) return;
    const base = ejectSeconds * 1000;
    const cap = Math.max(MAX_EJECTION_MS, base);
    // A target that behaved for as long as its next ejection would last starts a new run.
    if (now - this.#ejectionEndedAt > Math.min(base * 2 ** this.#ejections, cap)) this.#ejections = 0;
    this.#ejectedUntil = now + Math.min(base * 2 ** this.#ejections, cap);
    this.#ejections++;
    this.#failures = [];
    this.#settle(now);
  }

  /** An active check's outcome (`error` null when it passed), against the service's thresholds. */
  checked(error: string | null, check: HealthCheck): void {
    const now = Date.now();
    if (error === null) {
      this.#fails = 0;
      this.#passes++;
      if (this.#unhealthy && this.#passes >= check.healthyThreshold) this.#unhealthy = false;
      if (this.#ejectedUntil > now) this.#ejectionEndedAt = now;
      this.#ejectedUntil = 0; // a passing check ends an ejection at once
    } else {
      this.#lastError = error;
      this.#passes = 0;
      this.#fails++;
      if (this.#fails >= check.unhealthyThreshold) this.#unhealthy = true;
    }
    this.#answered = true;
    this.#settle(now);
  }

  /** As the health report gives it. */
  entry(): TargetHealthEntry {
    return { url: this.url, state: this.state, since: this.#since, lastError: this.#lastError };
  }

  #expireEjection(now: number): void {
    if (this.#ejectedUntil <= now) {
      this.#ejectionEndedAt = this.#ejectedUntil;
      this.#ejectedUntil = 0;
      this.#settle(now);
    }
  }

  /** Recomputes the state from its parts; a change is stamped and told once. */
  #settle(now: number): void {
    const state: TargetState = this.#unhealthy
      ? 'unhealthy'
      : this.#ejectedUntil > now
        ? 'ejected'
        : this.#checked && !this.#answered
          ? 'unknown'
          : 'healthy';
    if (state === this.#state) return;
    const previous = this.#state;
    this.#state = state;
    this.#since = now;
    this.#onChange(this, previous);
  }
}
