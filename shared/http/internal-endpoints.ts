import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createGatewayServer } from './http-server.js';
import { sendJson } from './http-response.js';

/** One readiness condition, e.g. `redis` (reachable) or `registry` (a snapshot is loaded). */
export interface ReadinessCheck {
  name: string;
  check(): boolean | Promise<boolean>;
}

export interface InternalEndpointsOptions {
  checks: readonly ReadinessCheck[];
  /** Prometheus text exposition and its content type. */
  metrics(): Promise<{ contentType: string; body: string }>;
}

/**
 * `/healthz` (the process answers), `/readyz` (every check passes: 200, else 503, with each
 * check's result) and `/metrics` (Prometheus text). Served on internal ports only, never on the
 * public listener, and never rate limited. Returns a request listener that answers those three
 * paths and reports whether it did.
 */
export function internalEndpoints(options: InternalEndpointsOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok' });
    } else if (path === '/readyz') {
      void readiness(options.checks).then(({ ready, checks }) => sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', checks }));
    } else if (path === '/metrics') {
      void options.metrics().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
          res.end(body);
        },
        () => sendJson(res, 500, { error: 'Internal server error' }),
      );
    } else {
      return false;
    }
    return true;
  };
}

async function readiness(checks: readonly ReadinessCheck[]): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
  const results = await Promise.all(checks.map(async (item) => [item.name, await Promise.resolve(item.check()).catch(() => false)] as const));
  return { ready: results.every(([, ok]) => ok), checks: Object.fromEntries(results) };
}

/**
 * A server for an INTERNAL_PORT that has nothing else on it: the three {@link internalEndpoints}
 * and a JSON 404 for any other request. Not yet listening.
 */
export function createInternalServer(options: InternalEndpointsOptions): Server {
  const internal = internalEndpoints(options);
  return createGatewayServer((req, res) => {
    if (!internal(req, res)) sendJson(res, 404, { error: 'Not found' });
  });
}
