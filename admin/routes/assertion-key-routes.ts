import { sendJson } from '../../shared/http/http-response.js';
import { actorOf } from '../actor.js';
import type { AssertionKeys } from '../credentials/assertion-keys.js';
import type { Handler } from '../http/request-context.js';

/** The identity assertion's key endpoint (design.md §4.7); admin and CSRF guards are wired in route-table.ts. */
export interface AssertionKeyHandlers {
  rotate: Handler;
}

export function createAssertionKeyHandlers(deps: { keys: AssertionKeys }): AssertionKeyHandlers {
  return {
    /**
     * POST /api/assertion-keys/rotate → 200 `{ kid, previousKid }`: a new key signs every assertion
     * from now on; the previous one stays published until its assertions have expired. Audited as
     * `ASSERTION_KEY_ROTATED`. No body is read.
     */
    rotate: async (ctx) => {
      const rotated = await deps.keys.rotate(actorOf(ctx));
      sendJson(ctx.res, 200, rotated);
    },
  };
}
