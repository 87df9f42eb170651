import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Session } from '../shared/types.js';

/** What an admin-plane handler gets for one request. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The request URL resolved against PUBLIC_URL. */
  readonly url: URL;
  /** Named path parameters (`:id`), raw. */
  readonly params: Readonly<Record<string, string>>;
  readonly clientIp: string;
  /** The session of the `gw_session` cookie, or null. */
  readonly session: Session | null;
  /** The cookie's session id (secret: never log it), or null. */
  readonly sessionId: string | null;
}

/** A route handler; a thrown `GatewayError` becomes its JSON error response. */
export type Handler = (ctx: RequestContext) => void | Promise<void>;
