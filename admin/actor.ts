import { tokenActorId } from './credentials/api-tokens.js';
import type { Actor } from './audit-log.js';
import { isLiveToken } from './credentials/bearer-auth.js';
import type { RequestContext } from './http/request-context.js';

/**
 * Who a request acts as, for the audit log: the session's subject, or `token:<id>` when it acts
 * with an API token (requireAdmin then sets the session aside: design.md §4.8); and the client
 * address.
 */
export function actorOf(ctx: RequestContext): Actor {
  const token = ctx.session === null && isLiveToken(ctx.apiToken) ? tokenActorId(ctx.apiToken.id) : null;
  return { userId: ctx.session?.user.sub ?? token, ipAddress: ctx.clientIp };
}
