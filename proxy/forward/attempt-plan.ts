import type { AttemptFailure } from '../pool/retry-policy.js';
import type { UpstreamFailureKind } from './upstream-errors.js';

/** What follows a forwarded request's head: nothing, the client's body, or a WebSocket upgrade. */
export type ForwardMode = 'no-body' | 'body' | 'websocket';

/** Where one attempt of a request goes. */
export interface Destination {
  /** The target's origin (`http(s)://host:port`): the connection pool's key. */
  readonly origin: string;
  /** The path and query sent to the target. */
  readonly path: string;
}

/** A response head's fields as undici reports them. */
export type ResponseFields = Record<string, string | string[] | undefined>;

/**
 * Where an exchange (exchange.ts) sends a request and what it makes of each attempt's outcome:
 * the one part that differs between a service's pool of targets (target-attempts.ts: balancing,
 * retries, outlier detection, the sticky cookie, the access log's attribution, the upstream-error
 * metric) and the admin process of split mode (admin-handoff.ts: one destination, nothing
 * retried or mapped). The exchange itself only moves bytes, times and answers.
 */
export interface AttemptPlan<D extends Destination = Destination> {
  /** The first attempt's destination. */
  first(): D;
  /**
   * An attempt to `destination` failed with `cause` (an error code, an upstream failure kind, or
   * `status 503`); `answered` when the target sent a response head (a 502/503/504).
   */
  failed(destination: D, cause: string, answered: boolean): void;
  /**
   * Where the request goes next after its attempt to `destination` failed as `failure`, with
   * `remainingMs` of UPSTREAM_TIMEOUT left; undefined when it may not go anywhere else (the
   * client then gets the failure).
   */
  next(destination: D, failure: AttemptFailure, remainingMs: number): D | undefined;
  /** An attempt to `destination` is over (answered, failed or aborted). */
  settled(destination: D): void;
  /** The fields of `destination`'s response head as the client gets them: a flat `[name, value, …]` list. */
  responseFields(destination: D, fields: ResponseFields): (string | string[])[];
  /** A failure the client gets (`kind` as answered, `code` the error's code when it has one): counted and logged. */
  report(kind: UpstreamFailureKind, code: string | undefined): void;
}
