import type { Duplex } from 'node:stream';

/**
 * Joins two sockets after a successful protocol upgrade (RFC 9110 §7.8, `101 Switching
 * Protocols`): bytes flow both ways with backpressure. When either side ends, what it sent is
 * flushed to the other and both are closed (upgraded protocols such as WebSocket, RFC 6455 §7,
 * have their own close handshake and no use for a half-open TCP connection; the public server's
 * sockets allow half-open, so without this a vanished client would leave the tunnel open). An
 * error or close on either side closes both at once.
 */
export function tunnel(client: Duplex, upstream: Duplex): void {
  const teardown = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', teardown).on('close', teardown).on('end', () => upstream.end(teardown));
  upstream.on('error', teardown).on('close', teardown).on('end', () => client.end(teardown));
  client.pipe(upstream, { end: false });
  upstream.pipe(client, { end: false });
}
