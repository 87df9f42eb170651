import { sendJson } from '../../shared/http/http-response.js';
import { actorOf } from '../actor.js';
import type { ApiTokens } from '../credentials/api-tokens.js';
import { readJsonBody } from '../http/request-body.js';
import type { Handler } from '../http/request-context.js';

/**
 * The admin API token endpoints (design.md §4.8); the guards (an admin session, no token; CSRF on
 * changes) are wired in route-table.ts.
 */
export interface TokenHandlers {
  list: Handler;
  create: Handler;
  revoke: Handler;
}

export function createTokenHandlers(deps: { tokens: ApiTokens }): TokenHandlers {
  const { tokens } = deps;
  return {
    /** GET /api/tokens → 200, every token not revoked, newest first, without secrets or hashes. */
    list: ({ res }) => sendJson(res, 200, tokens.list()),

    /**
     * POST /api/tokens with `{ name, scope, expiresInDays }` → 201, the token and its `secret`
     * (`ght_…`), which no later answer shows again; 400 naming each bad field.
     */
    create: async (ctx) => {
      const creator = { userId: ctx.session!.user.sub, ipAddress: ctx.clientIp };
      const { token, secret } = tokens.create(await readJsonBody(ctx), creator);
      sendJson(ctx.res, 201, { ...token, secret });
    },

    /** DELETE /api/tokens/:id → 204: the token stops working at once; 404 `Token not found`. */
    revoke: (ctx) => {
      tokens.revoke(ctx.params.id!, actorOf(ctx));
      ctx.res.writeHead(204, { 'cache-control': 'no-store' }).end();
    },
  };
}
