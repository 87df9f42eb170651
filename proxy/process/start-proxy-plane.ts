import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Backends } from '../../shared/backends/backends.js';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { drain, listen } from '../../shared/http/http-server.js';
import { createHttpsRedirectServer } from '../../shared/tls/https-redirect.js';
import { openListenerTls } from '../../shared/tls/listener-tls.js';
import type { Logger } from '../../shared/logger.js';
import { meteredSink, type GatewayMetrics } from '../pipeline/gateway-metrics.js';
import { createProxyPlane } from '../pipeline/proxy-plane.js';
import { createPublicServer, type PublicServer } from './public-server.js';
import { closeInOrder } from '../../shared/close-in-order.js';

export interface ProxyPlaneOptions {
  config: Config;
  /** Registry snapshots, sessions, the general rate limit and the access-log sink. */
  backends: Backends;
  /**
   * Serves the gateway-owned paths: the admin plane of this process (embedded), or the hand-off
   * to the admin process (split mode).
   */
  adminPlane: (req: IncomingMessage, res: ServerResponse) => void;
  /** Counts requests and target failures; its owner serves its registry on an internal port. */
  metrics: GatewayMetrics;
  logger: Logger;
}

/** A data plane serving PORT. */
export interface RunningProxyPlane {
  /** The port bound (PORT, or the one picked when PORT is 0). */
  readonly port: number;
  /** The port HTTP_PORT's redirect to https bound (undefined: HTTP_PORT unset). */
  readonly httpPort: number | undefined;
  readonly server: PublicServer;
  /**
   * Stops accepting, finishes in-flight requests (up to 10 s; tunnels are closed at once), closes
   * the upstream pools, then closes the access-log sink: it ships what it holds, trying for up to
   * 5 s while the pipeline is down, then drops and counts the rest. Never rejects.
   */
  close(): Promise<void>;
}

/**
 * Starts the data plane (design.md §3) on the public listener at PORT over `backends`; resolves once
 * it listens. Every finished request is one access-log record and one observation in `metrics`.
 * With TLS files PORT speaks HTTPS, and with HTTP_PORT a plain listener redirects there (design.md
 * §4.14); this process loads and watches the files itself (each cluster worker too).
 * @throws when PORT or HTTP_PORT cannot be bound (the message names it), or a TLS file is broken
 * (named by its variable).
 */
export async function startProxyPlane(options: ProxyPlaneOptions): Promise<RunningProxyPlane> {
  const { config, backends, metrics } = options;
  const { tls: tlsSettings } = config;
  const tls = tlsSettings.public && openListenerTls(tlsSettings.public, tlsSettings.hsts, options.logger);
  const accessLog = backends.accessLogSink();
  const plane = createProxyPlane({
    ...backends,
    config,
    accessLog: meteredSink(accessLog, metrics),
    upstreamFailures: metrics,
    refusals: metrics,
    clientIp: clientIpResolver(config.trustProxy),
    adminPlane: options.adminPlane,
    logger: options.logger,
  });
  metrics.trackTargets(plane.targetHealth);
  const server = createPublicServer(plane, tls);
  const redirect = tlsSettings.httpPort === undefined ? undefined : createHttpsRedirectServer([config.publicUrl, ...(config.adminUrl ? [config.adminUrl] : [])]);
  const redirecting = redirect && { close: () => drain(redirect) };
  try {
    const port = await listenNamed(server.server, config.port, 'PORT');
    const httpPort = redirect && (await listenNamed(redirect, tlsSettings.httpPort!, 'HTTP_PORT'));
    return { port, httpPort, server, close: () => closeInOrder(server, redirecting, tls, plane, accessLog) };
  } catch (error) {
    await closeInOrder(server, tls); // the caller stops the rest (embedded-gateway.ts, a process's exit)
    throw error;
  }
}

/** {@link listen}, its error naming the variable of the port. */
function listenNamed(server: Server, port: number, variable: string): Promise<number> {
  return listen(server, port).catch((error: Error) => {
    throw new Error(`${variable} ${port}: ${error.message}`, { cause: error });
  });
}
