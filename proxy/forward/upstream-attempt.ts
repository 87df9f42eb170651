import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Destination, ResponseFields } from './attempt-plan.js';
import type { Span } from '@opentelemetry/api';
import { errorCode } from '../../shared/error-code.js';

/** What an attempt tells the exchange it belongs to (exchange.ts), and asks it. */
export interface AttemptOwner<D extends Destination> {
  /** Whether `attempt`'s events still count: it is the exchange's current attempt. */
  isCurrent(attempt: UpstreamAttempt<D>): boolean;
  attemptStarted(attempt: UpstreamAttempt<D>): void;
  attemptSettled(attempt: UpstreamAttempt<D>): void;
  responseStart(attempt: UpstreamAttempt<D>, statusCode: number, fields: ResponseFields, statusMessage: string | undefined): void;
  upgrade(attempt: UpstreamAttempt<D>, statusCode: number, fields: ResponseFields, upstream: Duplex): void;
  /** A chunk of the response; false when the client's socket is full (pause). */
  write(chunk: Buffer): boolean;
  end(trailers: IncomingHttpHeaders): void;
  failed(attempt: UpstreamAttempt<D>, error: Error): void;
}

/**
 * One dispatch of a request to one destination: undici's handler, handing each event to its
 * exchange while it is the exchange's current attempt; an aborted earlier attempt's late events
 * are dropped. Tells its exchange once when it is over (settled), whatever ended it.
 */
export class UpstreamAttempt<D extends Destination> implements Dispatcher.DispatchHandler {
  readonly #exchange: AttemptOwner<D>;
  readonly destination: D;
  #controller: Dispatcher.DispatchController | undefined;
  /** Whether undici began to write the request (its `onRequestStart`, right before the write). */
  started = false;
  /** Its client span, when the request is traced (design.md §3.10); ended when it settles. */
  span: Span | undefined;
  #settled = false;

  constructor(exchange: AttemptOwner<D>, destination: D) {
    this.#exchange = exchange;
    this.destination = destination;
  }

  /** Stops the attempt with `reason` (what undici reports to a late handler). */
  abort(reason: Error): void {
    this.#controller?.abort(reason);
    this.#settle();
  }

  /** Reads on after a pause for the client's backpressure. */
  resume(): void {
    this.#controller?.resume();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.started = true;
    if (this.#exchange.isCurrent(this)) this.#exchange.attemptStarted(this);
    else controller.abort(new RetriedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, fields: ResponseFields, statusMessage?: string): void {
    if (this.#exchange.isCurrent(this)) this.#exchange.responseStart(this, statusCode, fields, statusMessage);
    else controller.abort(new RetriedError());
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, statusCode: number, fields: ResponseFields, upstream: Duplex): void {
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.upgrade(this, statusCode, fields, upstream);
    else upstream.destroy();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#exchange.isCurrent(this) && !this.#exchange.write(chunk)) controller.pause();
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.end(trailers);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.span?.setAttribute('error.type', errorCode(error) ?? error.name); // before its end, in #settle
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.failed(this, error);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.span?.end();
    this.#exchange.attemptSettled(this);
  }
}

/** The abort reason given to undici when the client disconnects before the response is done. */
export class ClientClosedError extends Error {
  readonly code = 'GATEHOUSE_CLIENT_CLOSED';
  constructor() {
    super('client closed the connection');
    this.name = 'ClientClosedError';
  }
}

/** The abort reason of an attempt given up for another destination's. */
export class RetriedError extends Error {
  readonly code = 'GATEHOUSE_RETRIED';
  constructor() {
    super('retried on another target');
    this.name = 'RetriedError';
  }
}
