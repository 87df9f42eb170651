import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { GatewayError } from '../shared/errors.js';
import { PUBLIC_HANDOFF_HEADER } from '../shared/gateway-paths.js';
import { sendError } from '../shared/http-response.js';
import type { Logger } from '../shared/logger.js';
import { HOP_BY_HOP, comparableName, connectionOptions } from './hop-by-hop.js';

/** Forwarding headers the hand-off sets itself; a client's own copies are dropped. */
const FORWARDING = new Set(['forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip']);

/** The split-mode hand-off of gateway-owned paths to the admin process. */
export interface AdminHandoff {
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

/**
 * In split mode the proxy serves gateway-owned paths (`/auth`, `/api`, `/dashboard`, `/`) by
 * forwarding them to the admin process at `ADMIN_INTERNAL_URL`, like an upstream but with the
 * gateway's own cookies kept in both directions (the admin plane sets and reads them). The client
 * address travels in `X-Forwarded-For` (the admin process believes it from loopback and
 * TRUST_PROXY peers), and `X-Forwarded-Host` is `publicUrl`'s host. Admin process unreachable →
 * 503 `Service unavailable`; proxied traffic is unaffected.
 */
export function createAdminHandoff(
  adminUrl: URL,
  publicUrl: URL,
  clientIp: (req: IncomingMessage) => string,
  logger: Logger,
): AdminHandoff {
  const publicHost = publicUrl.host;
  const pool = new Pool(adminUrl.origin, { connections: 32, headersTimeout: 30_000, connect: { timeout: 5_000 } });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const response = await pool.request({
      path: req.url ?? '/',
      method: req.method as 'GET',
      headers: requestHeaders(req, clientIp(req), publicHost),
      body: hasBody ? req : null,
      signal: abort.signal,
    });
    res.writeHead(response.statusCode, withoutHopByHop(response.headers));
    await pipeline(response.body, res);
  }

  return {
    handle(req, res) {
      forward(req, res).catch((error: unknown) => {
        if (res.headersSent || res.destroyed) {
          res.destroy();
          return;
        }
        logger.error({ code: (error as { code?: string }).code }, 'admin process unreachable');
        sendError(res, new GatewayError('SERVICE_UNAVAILABLE'));
      });
    },
    close: () => pool.close(),
  };
}

/**
 * X-Forwarded-For/Proto/Host first (as for upstreams, see request-headers.ts), then the client's
 * headers minus hop-by-hop and forwarding ones, and the mark that the request came to the public
 * origin (see admin/served-origin.ts). `publicHost` (PUBLIC_URL's), never the client's `Host`: the
 * admin plane may build links from it.
 */
function requestHeaders(req: IncomingMessage, ip: string, publicHost: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {
    'x-forwarded-for': ip,
    'x-forwarded-proto': 'encrypted' in req.socket ? 'https' : 'http',
    'x-forwarded-host': publicHost,
  };
  for (const [name, value] of Object.entries(withoutHopByHop(req.headers))) {
    if (!FORWARDING.has(comparableName(name))) headers[name] = value;
  }
  headers[PUBLIC_HANDOFF_HEADER] = '1'; // the public origin's request, whatever the client sent
  return headers;
}

function withoutHopByHop(source: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = connectionOptions(typeof source.connection === 'string' ? source.connection : undefined);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'host' || named?.includes(name)) continue;
    out[name] = value;
  }
  return out;
}
