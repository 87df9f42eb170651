import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../shared/logger.js';
import { mapResponseHeaders } from '../headers/response-headers.js';
import type { AccessRecord } from '../pipeline/access-record.js';
import type { RequestTrace } from '../../shared/tracing/request-trace.js';
import type { BalancingInput } from '../pool/balancing/balancer.js';
import { mayRetry, type AttemptFailure, type RequestBody } from '../pool/retry-policy.js';
import type { RouteTarget } from '../pool/route-target.js';
import { stickyCookie } from '../pool/sticky-target.js';
import type { Route } from '../routing/route-table.js';
import { joinPath } from '../routing/path-mapping.js';
import type { AttemptPlan, Destination, ForwardMode, ResponseFields } from './attempt-plan.js';
import type { UpstreamFailureCounter, UpstreamFailureKind } from './upstream-errors.js';

/** What a request to a service brings besides its head: how its pool picks, and the sticky cookie. */
export interface ForwardExtras {
  /** The request's client address and sticky cookie, for the pool's balancer. */
  balancing: BalancingInput;
  /** A chunked body's announced trailer fields to send along (see `ExchangeRequest.trailerNames`). */
  trailerNames?: string[] | undefined;
  /** The sticky cookie's name and whether it is Secure, when the pool balances by cookie. */
  sticky?: { name: string; secure: boolean } | undefined;
  /** The request's access-log record: told which target answered. */
  record?: AccessRecord | undefined;
  /** The request's trace, when tracing is on (design.md §3.10). */
  trace?: RequestTrace | undefined;
}

/** Where a service's request failures are counted and logged. */
export interface FailureReporting {
  logger: Logger;
  /** `gatehouse_upstream_errors_total`, by service and kind. */
  failures?: UpstreamFailureCounter | undefined;
}

/** An attempt's destination within a service's pool: one of its targets. */
export interface TargetDestination extends Destination {
  readonly target: RouteTarget;
}

/**
 * The attempts of one request to a service (design.md §4.13): the first to the target its pool
 * picks; after a failure retry-policy.ts allows, the next to another target not yet tried (each
 * target once; `sent` failures at most the service's `retries` times). Every failure is told to
 * outlier detection (target-health.ts); the answering target is named in the access-log record,
 * and given the client by the sticky cookie when the pool balances by cookie.
 */
export class TargetAttempts implements AttemptPlan<TargetDestination> {
  readonly #route: Route;
  readonly #req: IncomingMessage;
  readonly #path: string;
  readonly #mode: ForwardMode;
  readonly #extras: ForwardExtras;
  readonly #reporting: FailureReporting;
  /** Targets tried so far, once a second one is wanted. */
  #tried: RouteTarget[] | undefined;
  #retriesLeft: number;
  /** The target the sticky cookie names failed this request without answering (dead, or resetting). */
  #stickyTargetLost = false;

  /** `path`: what follows the prefix, and the query, joined to each target's base path. */
  constructor(route: Route, req: IncomingMessage, path: string, mode: ForwardMode, extras: ForwardExtras, reporting: FailureReporting) {
    this.#route = route;
    this.#req = req;
    this.#path = path;
    this.#mode = mode;
    this.#extras = extras;
    this.#reporting = reporting;
    this.#retriesLeft = route.pool.retries;
  }

  first(): TargetDestination {
    return this.#to(this.#route.pool.pick(this.#extras.balancing)!);
  }

  failed({ target }: TargetDestination, cause: string, answered: boolean): void {
    const pool = this.#route.pool;
    target.health.failed(cause, () => pool.mayEject(target));
    if (!answered && target.stickyId === this.#extras.balancing.stickyId) this.#stickyTargetLost = true;
  }

  next({ target }: TargetDestination, failure: AttemptFailure, remainingMs: number): TargetDestination | undefined {
    if (failure === 'sent' && this.#retriesLeft <= 0) return undefined;
    if (remainingMs <= 0 || !mayRetry(failure, this.#req.method ?? '', this.#body())) return undefined;
    (this.#tried ??= []).push(target);
    const next = this.#route.pool.pick(this.#extras.balancing, this.#tried);
    if (next === undefined) return undefined;
    if (failure === 'sent') this.#retriesLeft--;
    this.#reporting.logger.debug({ serviceId: this.#route.service.id, target: next.url }, 'retrying on another target');
    return this.#to(next);
  }

  settled({ target }: TargetDestination): void {
    target.health.requestSettled();
  }

  /** Mapped to the public side (response-headers.ts), with the sticky cookie when it should name this target. */
  responseFields({ target }: TargetDestination, fields: ResponseFields): (string | string[])[] {
    const { record, sticky } = this.#extras;
    if (record !== undefined) record.target = target.url;
    const mapped = mapResponseHeaders(fields, target);
    if (sticky !== undefined && this.#rebinds(target)) addSetCookie(mapped, stickyCookie(sticky.name, target.stickyId, target.prefix, sticky.secure));
    return mapped;
  }

  report(kind: UpstreamFailureKind, code: string | undefined): void {
    const { id } = this.#route.service;
    this.#reporting.failures?.upstreamError(id, kind);
    this.#reporting.logger.warn({ serviceId: id, code, requestId: this.#extras.record?.requestId }, 'upstream request failed');
  }

  /** An attempt to `target`: at its base path, counted in its requests. */
  #to(target: RouteTarget): TargetDestination {
    target.health.requestSent();
    return { origin: target.origin, path: joinPath(target.basePath, this.#path), target };
  }

  #body(): RequestBody {
    if (this.#mode === 'no-body') return 'none';
    if (this.#mode === 'websocket') return 'upgrade';
    return this.#req.readableDidRead ? 'read' : 'unread';
  }

  /**
   * Whether the sticky cookie should name `target`, which answers: when the client's cookie names
   * no target of the pool, one out of rotation, or one that failed this request without an answer
   * (refused, reset: most likely gone, and outlier detection has not caught up yet). A target that
   * answered 502/503/504 once, the request retried elsewhere, keeps its client.
   */
  #rebinds(target: RouteTarget): boolean {
    const { stickyId } = this.#extras.balancing;
    if (target.stickyId === stickyId) return false;
    if (this.#stickyTargetLost) return true;
    const named = this.#route.pool.targets.find((each) => each.stickyId === stickyId);
    return named === undefined || !named.health.available;
  }
}

/**
 * Adds `cookie` to the `Set-Cookie` of a `[name, value, …]` list, beside the target's own: one entry
 * per name, since `writeHead` sets each entry over the last of its name once the response has
 * fields of its own (`X-Request-Id`, HSTS), and a second `set-cookie` entry would replace the first.
 */
function addSetCookie(fields: (string | string[])[], cookie: string): void {
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] !== 'set-cookie') continue;
    fields[i + 1] = [fields[i + 1]!].flat().concat(cookie);
    return;
  }
  fields.push('set-cookie', cookie);
}
