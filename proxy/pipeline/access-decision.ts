import type { IncomingMessage } from 'node:http';
import { PUBLIC_GUARD } from '../../shared/services/service-rules.js';
import { fallsShort, type StepUp } from '../../shared/identity/step-up.js';
import type { SessionUser } from '../../shared/types.js';
import { accessVerdict } from '../../shared/services/access-verdict.js';
import type { BearerTokens } from '../auth/bearer-token.js';
import type { SessionCheck } from '../auth/session-check.js';
import type { InboundHeaders } from '../headers/inbound-headers.js';
import type { Route } from '../routing/route-table.js';
import type { RequestIdentity } from './request-identity.js';
import { ruleGuardFor } from './rule-decision.js';

/**
 * What the gateway decides for a request to a service (design.md §3.4–3.5, §4.18), before it
 * forwards it or answers for it. `user` is the caller whenever one was identified (a session or a
 * verified bearer token), for the access log, whatever the outcome.
 * - `allow`: forward (with `user`'s identity when there is one);
 * - `disabled`: 503 `Service is disabled`;
 * - `deny`: 403 `Access denied` (a `deny` rule, or an access policy refusing `user`);
 * - `sign-in`: no caller where one is needed: 401, or a browser sent to sign in;
 * - `step-up`: an allowed caller whose sign-in is too old or of another `acr` than `needs` asks
 *   (design.md §4.18): a browser sent to sign in again, a bearer token's caller (`bearer`) 401
 *   `insufficient_user_authentication` (RFC 9470 §3).
 */
export type AccessOutcome =
  | { readonly kind: 'allow' | 'disabled' | 'deny' | 'sign-in'; readonly user: SessionUser | undefined }
  | { readonly kind: 'step-up'; readonly user: SessionUser; readonly needs: StepUp; readonly bearer: boolean };

/** The part of a request the decision reads. */
export interface DecisionInput {
  /**
   * Its method and headers (a CORS preflight is told by them): the request itself, or for the
   * verify endpoint (design.md §4.19) the original method with the ingress's copy of the headers.
   */
  readonly req: Pick<IncomingMessage, 'method' | 'headers'>;
  readonly inbound: InboundHeaders;
  readonly route: Route;
  /** The request path's routing key (routing-key.ts). */
  readonly key: string;
  /** The service host the request was routed by (design.md §4.16): its cookie names a host session. */
  readonly serviceHost: string | undefined;
  readonly identity: RequestIdentity | undefined;
}

/**
 * The auth decision of the data plane, one for the proxied request and for the auth decision an
 * ingress asks for: the service's rules, then who is asking, then enabled, deny, sign-in, access,
 * step-up.
 */
export class AccessDecision {
  readonly #sessions: SessionCheck;
  /** Undefined while OIDC_API_AUDIENCES leaves bearer tokens off. */
  readonly #bearerTokens: BearerTokens | undefined;

  constructor(sessions: SessionCheck, bearerTokens: BearerTokens | undefined) {
    this.#sessions = sessions;
    this.#bearerTokens = bearerTokens;
  }

  /**
   * Decides `input`. A disabled service never needs the session: a failing store leaves the caller
   * anonymous rather than turning its 503 into another one.
   * @throws {GatewayError} `SESSION_STORE_UNAVAILABLE` when sign-in is required and the store
   *   fails; a bearer token's own 401 (bearer-token.ts) where sign-in is required.
   */
  async decide(input: DecisionInput): Promise<AccessOutcome> {
    const { route, inbound } = input;
    const { service } = route;
    // design.md §4.18: a matching rule replaces requireAuth and access; one check for a service without rules
    const rule = route.rules && ruleGuardFor(route.rules, route, input.req, input.key, inbound.hasBody);
    const signIn = rule === undefined ? service.requireAuth : rule.signIn;
    const required = service.enabled && signIn;
    // Without a session, a protected service takes a machine client's bearer token (design.md §4.7).
    // A bearer token is read only where it may matter: no await at all on an anonymous public request.
    const sessionUser = await this.#sessions.user(inbound.cookie, required, input.serviceHost, input.identity);
    const user = sessionUser ?? (required || rule === PUBLIC_GUARD ? await this.#bearerUser(inbound, required, input.identity) : undefined);
    // the order of checks the admin plane's explanation states too (access-verdict.ts)
    const kind = accessVerdict({ enabled: service.enabled, requireAuth: service.requireAuth, access: route.access, guard: rule, user });
    if (kind !== 'allow' || user === undefined) return { kind, user };
    // design.md §4.18: a rule's step-up replaces the service's; where no sign-in is needed, none applies
    const needs: StepUp = rule === undefined ? service : rule;
    if (signIn && fallsShort(user, needs, Date.now())) return { kind: 'step-up', user, needs, bearer: sessionUser === undefined };
    return { kind: 'allow', user };
  }

  /**
   * A machine client's bearer token (design.md §4.7) where sign-in is `required`; under a `public`
   * rule of a protected service (design.md §4.18) one that verifies still names the caller, and
   * one that does not leaves it anonymous (a webhook's own token must not turn into a 401).
   */
  #bearerUser(inbound: InboundHeaders, required: boolean, identity: RequestIdentity | undefined): Promise<SessionUser | undefined> | undefined {
    const user = this.#bearerTokens?.user(inbound.authorization, identity?.trace);
    return required ? user : user?.catch(() => undefined);
  }
}
