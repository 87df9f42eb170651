/**
 * A TCP relay in front of redis-server that a test can cut and restore, to take one process's
 * connections away while Redis itself (and everyone else) stays up. Not a test file.
 */
import { startSwitchableRelay } from './switchable-relay.js';

export interface TcpRelay {
  /** `redis://127.0.0.1:<relay port>`. */
  url: string;
  /** Destroys every relayed connection and refuses new ones (they are closed on accept). */
  cut(): void;
  /** Relays new connections again. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(targetPort: number): Promise<TcpRelay> {
  const relay = await startSwitchableRelay();
  relay.point(targetPort);
  return {
    url: `redis://127.0.0.1:${relay.port}`,
    cut() {
      relay.point(undefined);
      relay.dropConnections();
    },
    restore() {
      relay.point(targetPort);
    },
    close: () => relay.close(),
  };
}
