import { Agent, request } from 'undici';
import { errorCode } from '../../shared/error-code.js';
import type { HealthCheck } from '../../shared/types.js';
import { joinPath } from '../routing/path-mapping.js';
import { dialledOrigin, http2Connector, isH2cOrigin } from '../forward/http2-targets.js';
import type { Route } from '../routing/route-table.js';
import type { RouteTarget } from './route-target.js';

/** Connections one origin's probes may hold open (a probe at a time per target, mostly). */
const PROBE_CONNECTIONS = 2;

/**
 * The active health checks this proxy process runs (a service's `healthCheck`): every target of
 * such a service gets a `GET` of the check's path under its base path every `intervalSeconds`,
 * the first at a random point of the first interval and each later one ±10 %, so processes and
 * workers started together do not probe in step. A probe passes when the response head arrives
 * within `timeoutMs` with the expected status (its body is read and dropped); the verdict goes to
 * the target's {@link TargetHealth} (target-health.ts), which applies the thresholds. Each
 * process checks on its own: a target may be reachable from one host and not from another.
 */
export class ActiveHealthChecks {
  /** Running probes by service id, target url and check settings. */
  readonly #probes = new Map<string, Probe>();
  readonly #agent = new Agent({ connections: PROBE_CONNECTIONS, pipelining: 1 });
  /** For `h2c://` targets: cleartext HTTP/2 (http2-targets.ts). */
  readonly #h2cAgent = new Agent({ connections: PROBE_CONNECTIONS, allowH2: true, connect: http2Connector(true) });

  /** Runs the probes `routes` call for, keeps those already running, stops the rest. */
  update(routes: Iterable<Route>): void {
    const wanted = new Set<string>();
    for (const route of routes) {
      const check = route.service.healthCheck;
      if (!check || !route.service.enabled) continue; // a disabled service sends its targets nothing
      for (const target of route.pool.targets) {
        const key = `${route.service.id} ${target.url} ${JSON.stringify(check)}`;
        wanted.add(key);
        if (!this.#probes.has(key)) this.#probes.set(key, new Probe(target, check, isH2cOrigin(target.origin) ? this.#h2cAgent : this.#agent));
      }
    }
    for (const [key, probe] of this.#probes) {
      if (wanted.has(key)) continue;
      probe.stop();
      this.#probes.delete(key);
    }
  }

  /** Stops every probe and closes their connections. */
  async close(): Promise<void> {
    for (const probe of this.#probes.values()) probe.stop();
    this.#probes.clear();
    await Promise.all([this.#agent.destroy(), this.#h2cAgent.destroy()]);
  }
}

/** One target's probes: a timer chain, at most one probe in flight. */
class Probe {
  readonly #target: RouteTarget;
  readonly #check: HealthCheck;
  readonly #agent: Agent;
  readonly #url: string;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(target: RouteTarget, check: HealthCheck, agent: Agent) {
    this.#target = target;
    this.#check = check;
    this.#agent = agent;
    this.#url = dialledOrigin(target.origin) + joinPath(target.basePath, check.path);
    this.#schedule(Math.random() * check.intervalSeconds * 1000);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => void this.#run(), delayMs);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    const error = await this.#probe();
    if (this.#stopped) return;
    this.#target.health.checked(error, this.#check);
    this.#schedule(this.#check.intervalSeconds * 1000 * (0.9 + Math.random() * 0.2));
  }

  /** One probe: null when it passed, else why not (`status 500`, `ECONNREFUSED`, `timeout`). */
  async #probe(): Promise<string | null> {
    const { timeoutMs, expectStatus } = this.#check;
    try {
      const response = await request(this.#url, {
        dispatcher: this.#agent,
        method: 'GET',
        headers: { 'user-agent': 'Gatehouse-HealthCheck' },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body.dump();
      return statusMatches(response.statusCode, expectStatus) ? null : `status ${response.statusCode}`;
    } catch (error) {
      const code = errorCode(error);
      return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || (error as Error).name === 'TimeoutError' ? 'timeout' : (code ?? 'probe failed');
    }
  }
}

/** Whether `status` is the one expected, or in the expected class (`"2xx"`). */
function statusMatches(status: number, expected: number | string): boolean {
  if (typeof expected === 'number') return status === expected;
  return String(status)[0] === expected[0];
}
