import type { Logger } from '../../shared/logger.js';
import type { PoolSettings } from '../../shared/services/target-pool-settings.js';
import type { TargetHealthEntry, TargetState } from '../../shared/types.js';
import { TargetHealth } from './target-health.js';

/**
 * Every target's {@link TargetHealth} in this proxy process, by service id and url, kept across
 * registry snapshots: a snapshot that keeps a target keeps what is known of it. A change of state
 * is logged once (warn when a target leaves rotation, info when it returns) and told to
 * `onChange` (the health reporter).
 */
export class TargetHealthBook {
  readonly #byKey = new Map<string, TargetHealth>();
  readonly #logger: Logger;
  readonly #onChange: () => void;

  constructor(logger: Logger, onChange: () => void = () => {}) {
    this.#logger = logger;
    this.#onChange = onChange;
  }

  /** The health of target `url` of service `serviceId`, made on first use, set to `settings`. */
  healthOf(serviceId: string, url: string, settings: PoolSettings): TargetHealth {
    const key = `${serviceId} ${url}`;
    let health = this.#byKey.get(key);
    if (health === undefined) {
      health = new TargetHealth(serviceId, url, settings.outlierDetection, settings.healthCheck !== null, (changed, previous) => this.#changed(changed, previous));
      this.#byKey.set(key, health);
    } else {
      health.configure(settings.outlierDetection, settings.healthCheck);
    }
    return health;
  }

  /** Forgets every target not in `kept` (targets a new snapshot no longer has). */
  retain(kept: ReadonlySet<TargetHealth>): void {
    for (const [key, health] of this.#byKey) if (!kept.has(health)) this.#byKey.delete(key);
  }

  /** Every known target. */
  all(): IterableIterator<TargetHealth> {
    return this.#byKey.values();
  }

  /** Each service's targets as a health report gives them, by service id. */
  report(): Record<string, TargetHealthEntry[]> {
    const services: Record<string, TargetHealthEntry[]> = {};
    for (const health of this.#byKey.values()) (services[health.serviceId] ??= []).push(health.entry());
    return services;
  }

  #changed(health: TargetHealth, previous: TargetState): void {
    const fields = { serviceId: health.serviceId, target: health.url, state: health.state, previous, lastError: health.entry().lastError };
    if (health.available) this.#logger.info(fields, 'target back in rotation');
    else this.#logger.warn(fields, 'target out of rotation');
    this.#onChange();
  }
}
