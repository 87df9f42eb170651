import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Logger } from '../../shared/logger.js';
import type { Session } from '../../shared/types.js';
import type { PresentedToken } from '../credentials/bearer-auth.js';
import type { ServedOrigin } from './served-origin.js';

/** What an admin-plane handler gets for one request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The origin the request arrived on (PUBLIC_URL's, or ADMIN_URL's when that is set). */
  readonly origin: ServedOrigin;
  /** The request URL resolved against {@link origin}. */
  readonly url: URL;
  /** Named path parameters (`:id`), raw. */
  readonly params: Readonly<Record<string, string>>;
  readonly clientIp: string;
  /**
   * The session of the origin's session cookie (`gw_session`, `gw_admin_session`), or null; null
   * too in a handler behind requireAdmin (guards.ts) when the request acts with its API token.
   */
  readonly session: Session | null;
  /**
   * The admin API token of `Authorization: Bearer` (design.md §4.8), looked up where the admin API
   * is served (null elsewhere); only the admin API's guards accept it.
   */
  readonly apiToken: PresentedToken;
  /** How long the request's body may pause, in ms (UPSTREAM_TIMEOUT, as for proxied uploads). */
  readonly bodyPauseMs: number;
  /** The cookie's session id (secret: never log it), or null. */
  readonly sessionId: string | null;
  /** The plane's logger for this request: its lines carry the request's `requestId` (design.md §3.10). */
  readonly logger: Logger;
  /**
   * The request's span while its trace is sampled (tracing/request-identity.ts): what the
   * handler's own spans (its requests to the identity provider) hang under.
   */
  readonly span: Span | undefined;
}

/** A route handler; a thrown `GatewayError` becomes its JSON error response. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;
