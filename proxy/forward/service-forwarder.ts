import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Route } from '../routing/route-table.js';
import type { ForwardMode } from './attempt-plan.js';
import { exchange } from './exchange.js';
import { TargetAttempts, type FailureReporting, type ForwardExtras } from './target-attempts.js';
import { UpstreamConnections } from './upstream-connections.js';

/** What a {@link ServiceForwarder} is made with. */
export interface ServiceForwarderOptions extends FailureReporting {
  /** UPSTREAM_TIMEOUT, in ms (see `UpstreamConnections.headersTimeoutMs`). */
  headersTimeoutMs: number;
}

/**
 * Forwards requests to services' targets (design.md §3.6, §4.13): each request is an exchange
 * (exchange.ts) whose attempts go where its service's pool says (target-attempts.ts), over one
 * keep-alive connection pool per target origin.
 */
export class ServiceForwarder {
  readonly #connections: UpstreamConnections;
  readonly #reporting: FailureReporting;

  constructor(options: ServiceForwarderOptions) {
    this.#connections = new UpstreamConnections(options.headersTimeoutMs);
    this.#reporting = { logger: options.logger, failures: options.failures };
  }

  /**
   * Forwards `req` to a target of `route`'s pool at the target's base path joined with `path`
   * (what follows the prefix, and the query), with `headers` (a flat `[name, value, …]` list);
   * `mode` says what follows the head. The response, or the 502/503/504 for a failure, is written
   * to `res`.
   */
  forward(req: IncomingMessage, res: ServerResponse, route: Route, path: string, headers: string[], mode: ForwardMode, extras: ForwardExtras): void {
    const plan = new TargetAttempts(route, req, path, mode, extras, this.#reporting);
    exchange(req, res, plan, { headers, mode, trailerNames: extras.trailerNames, trace: extras.trace }, this.#connections);
  }

  /** Closes the pools of origins no route points at any more; in-flight requests finish first. */
  retain(origins: ReadonlySet<string>): void {
    this.#connections.retain(origins);
  }

  /** Closes every pool once its in-flight requests are done. */
  close(): Promise<void> {
    return this.#connections.close();
  }
}
