import { userInfo } from 'node:os';
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

/** The audit log's `user_id` prefix for what an operator did on the admin host (`gatehouse tokens`): `local:<os user>`. */
export const LOCAL_ACTOR_PREFIX = 'local:';

/**
 * The operator running the CLI on the admin host, for the audit log: `local:<os user>` and no
 * address. The user's name comes from the system (the passwd entry), else `USER`, else the uid.
 */
export function localOperator(): Actor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER || `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return { userId: LOCAL_ACTOR_PREFIX + name, ipAddress: null };
}
