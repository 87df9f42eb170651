/**
 * gRPC unary load for the gRPC rows: one grpc-js channel (the Echo client of
 * test/support/grpc-service.ts, cleartext HTTP/2 with prior knowledge: one connection) with
 * `calls` concurrent `Unary` calls, in the closed loop of closed-loop.ts. Runs in the load thread
 * (load-thread.ts), never in a measured process.
 */
import { echoClient, grpc, unary } from '../test/support/grpc-service.js';
import { runClosedLoop, type Outcome } from './closed-loop.js';
import type { LoadResult } from './load.js';

export interface GrpcLoadOptions {
  /** `h2c://127.0.0.1:PORT[/prefix]`: the target itself, or a gateway's service path. */
  url: string;
  /** Concurrent calls. */
  calls: number;
  /** Run length, in s. */
  durationS: number;
}

/** A call's deadline, in ms (autocannon's 10 s timeout). */
const CALL_DEADLINE_MS = 10_000;

/** The request message: 23 bytes of JSON, small like the bench upstream's 13-byte body. */
const MESSAGE = { text: 'hello, bench' };

/**
 * Runs one load: a call answered OK is `2xx`, another status from the server `non-2xx`,
 * DEADLINE_EXCEEDED a timeout, UNAVAILABLE (no connection) an error. The channel is connected
 * before the clock starts.
 */
export async function runGrpcLoad(options: GrpcLoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const client = echoClient(target.host, { prefix: target.pathname });
  try {
    await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + CALL_DEADLINE_MS, (error) => (error ? reject(error) : resolve())));
    return await runClosedLoop({ url: options.url, concurrency: options.calls, durationS: options.durationS }, () => call(client));
  } finally {
    client.close();
  }
}

function call(client: ReturnType<typeof echoClient>): Promise<Outcome> {
  return unary(client, 'Unary', MESSAGE, { deadlineMs: CALL_DEADLINE_MS }).then(
    (): Outcome => '2xx',
    (error: grpc.ServiceError): Outcome => {
      if (error.code === grpc.status.DEADLINE_EXCEEDED) return 'timeout';
      return error.code === grpc.status.UNAVAILABLE ? 'error' : 'non-2xx';
    },
  );
}
