import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import { SERVICE_HOST_PATHS } from '../../shared/http/gateway-paths.js';
import { acceptsHtml, redirect, sendError, sendHtml } from '../../shared/http/http-response.js';
import { stepUpQuery, type StepUp } from '../../shared/identity/step-up.js';
import { signInAgainPage, stepUpInWords } from '../../shared/pages/step-up-pages.js';
import type { HostSignIn } from '../auth/host-sign-in.js';

/** The request a step-up answer is for. */
export interface StepUpRequest {
  readonly method: string | undefined;
  readonly accept: string | undefined;
  /** The raw request-target (path and query) to come back to. */
  readonly target: string;
  /** The service host it was routed by (design.md §4.16), or undefined on PUBLIC_URL's. */
  readonly serviceHost: string | undefined;
}

/** The message of step-up's 401s. */
const MESSAGE = 'Step-up sign-in required';

/** The 401 of a session short of a step-up, for a request that is not redirected: `{"error":"Step-up sign-in required"}`. */
export function stepUpRequiredError(): GatewayError {
  return new GatewayError('NOT_AUTHENTICATED', { message: MESSAGE });
}

/**
 * The data plane's answers to the `step-up` outcome (access-decision.ts, design.md §4.18): a caller
 * whose sign-in is older than `maxAge` or of an `acr` not listed.
 * - A browser's navigation (GET or HEAD accepting `text/html`): 302 to the sign-in with the
 *   requirement (`/auth/login?returnTo=…&max_age=…&acr_values=…`; on a service host by its host
 *   sign-in, host-sign-in.ts). Those parameters are only what to ask the provider: whatever a
 *   forged link asks, the session comes back here and is judged again.
 * - Another request of a session: 401 `Step-up sign-in required` (a page linking the step-up
 *   sign-in when it accepts HTML).
 * - A bearer token's caller: 401 with `WWW-Authenticate: Bearer error="insufficient_user_authentication"`
 *   and what is needed as `max_age` / `acr_values` (RFC 9470 §3).
 */
export class StepUpRequired {
  readonly #hostSignIn: HostSignIn;

  constructor(hostSignIn: HostSignIn) {
    this.#hostSignIn = hostSignIn;
  }

  /** Answers `request` for a caller short of `needs`; `bearer`: the caller is a bearer token's. */
  send(res: ServerResponse, request: StepUpRequest, needs: StepUp, bearer: boolean): void {
    if (bearer) return sendError(res, insufficientUserAuthentication(needs));
    const { method, accept, target, serviceHost } = request;
    const navigation = (method === 'GET' || method === 'HEAD') && acceptsHtml(accept);
    if (navigation && serviceHost !== undefined) return this.#hostSignIn.send(res, serviceHost, target, needs);
    if (navigation) return redirect(res, stepUpSignIn(target, needs, false));
    if (acceptsHtml(accept)) return sendHtml(res, 401, signInAgainPage(needs, stepUpSignIn(target, needs, serviceHost !== undefined)));
    sendError(res, stepUpRequiredError());
  }
}

/**
 * The step-up sign-in that returns to `target` (a path and query): PUBLIC_URL's
 * `/auth/login?returnTo=<target>&max_age=…&acr_values=…`, or (`onHost`) a service host's own
 * `/.gatehouse/login?rd=<target>&…`; relative, or after `origin` (an absolute address, for the
 * verify endpoint's `Location`).
 */
export function stepUpSignIn(target: string, needs: StepUp, onHost: boolean, origin = ''): string {
  const path = onHost ? `${SERVICE_HOST_PATHS.login}?rd=` : '/auth/login?returnTo=';
  return `${origin}${path}${encodeURIComponent(target)}${stepUpQuery(needs)}`;
}

/**
 * The 401 of a bearer token short of `needs` (RFC 9470 §3): `error="insufficient_user_authentication"`,
 * a description in words, and `max_age` / `acr_values` as asked.
 */
export function insufficientUserAuthentication(needs: StepUp): GatewayError {
  const params = [`error="insufficient_user_authentication"`, `error_description="The token needs ${stepUpInWords(needs)}"`];
  if (needs.maxAge != null) params.push(`max_age="${needs.maxAge}"`);
  if (needs.acr != null) params.push(`acr_values="${needs.acr.join(' ')}"`);
  return new GatewayError('NOT_AUTHENTICATED', { message: MESSAGE, headers: { 'www-authenticate': `Bearer ${params.join(', ')}` } });
}
