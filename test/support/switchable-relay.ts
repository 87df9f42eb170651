/**
 * A TCP relay on 127.0.0.1 whose target a test can change while it runs: pebble validates on one
 * fixed port, and the relay decides which proxy process that port reaches. It counts the
 * connections relayed to each target. Not a test file.
 */
import { once } from 'node:events';
import net from 'node:net';

export interface SwitchableRelay {
  /** The relay's own port. */
  readonly port: number;
  /** Sends new connections to 127.0.0.1:`port` (undefined: closes them at once). */
  point(port: number | undefined): void;
  /** Connections relayed to `port` so far. */
  relayedTo(port: number): number;
  /** Destroys every connection relayed so far (new ones go where {@link point} says). */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startSwitchableRelay(): Promise<SwitchableRelay> {
  const sockets = new Set<net.Socket>();
  const counts = new Map<number, number>();
  let target: number | undefined;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (target === undefined) return void client.destroy();
    counts.set(target, (counts.get(target) ?? 0) + 1);
    const upstream = net.connect(target, '127.0.0.1');
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    point(port) {
      target = port;
    },
    relayedTo: (port) => counts.get(port) ?? 0,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      target = undefined;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
