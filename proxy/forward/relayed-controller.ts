import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/**
 * undici's dispatch controller for a request sent by node:http or node:http2 instead of undici
 * (trailer-dispatch.ts, http2-dispatch.ts): the bookkeeping both share. The exchange's handler
 * (exchange.ts) is told of the response's start, its data, and then exactly one outcome, its end
 * or an error; `abort` reports its reason as that error and cancels the request; `pause` and
 * `resume` reach the response's stream, once there is one.
 */
export abstract class RelayedController implements Dispatcher.DispatchController {
  protected readonly handler: Dispatcher.DispatchHandler;
  #reason: Error | null = null;
  #paused = false;
  /** The handler has been told the outcome (end or error): nothing more is reported. */
  #settled = false;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.handler = handler;
  }

  get aborted(): boolean {
    return this.#reason !== null;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  /** Whether the outcome was reported. */
  protected get settled(): boolean {
    return this.#settled;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#reason = reason;
    this.fail(reason);
    this.cancel();
  }

  pause(): void {
    this.#paused = true;
    this.pauseResponse();
  }

  resume(): void {
    this.#paused = false;
    this.resumeResponse();
  }

  /** Reports the response's end with its trailer fields, unless an outcome was reported already. */
  protected finish(trailers: IncomingHttpHeaders): void {
    if (this.#settled) return;
    this.#settled = true;
    this.handler.onResponseEnd?.(this, trailers);
  }

  /** Reports `error` as the outcome, unless one was reported already. */
  protected fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.handler.onResponseError?.(this, error);
  }

  /** Stops the request on the wire (an abort). */
  protected abstract cancel(): void;
  protected abstract pauseResponse(): void;
  protected abstract resumeResponse(): void;
}
