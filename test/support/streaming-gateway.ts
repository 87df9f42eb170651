/**
 * A gateway alone in a child process (streaming-child.ts), for tests that measure its memory while
 * bodies stream through it: started on `/big` → `targetUrl`, asked for its resident set size.
 * Not a test file.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The child's resident set size now and at its highest since the last reset, in bytes; its CPU time so far, in µs. */
export interface Memory {
  rss: number;
  peak: number;
  cpuMicros: number;
}

export interface StreamingGateway {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** The RSS now and the peak since the last reset. */
  memory(): Promise<Memory>;
  /** As {@link memory}, then starts a new peak. */
  resetPeak(): Promise<Memory>;
  close(): Promise<void>;
}

/**
 * Starts the child gateway serving `/big` from `targetUrl`, with `settings` over the test defaults
 * (`{ H2C: 'true' }`) and `processEnv` in its environment (`NODE_EXTRA_CA_CERTS`: a test CA its
 * TLS connections trust).
 */
export async function startStreamingGateway(targetUrl: string, settings: Record<string, string> = {}, processEnv: Record<string, string> = {}): Promise<StreamingGateway> {
  const child = fork(fileURLToPath(new URL('./streaming-child.js', import.meta.url)), {
    env: { ...process.env, ...processEnv, GATEHOUSE_STREAMING_CHILD: '1', UPSTREAM_ORIGIN: targetUrl, GATEHOUSE_CHILD_ENV: JSON.stringify(settings) },
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    memory: () => ask(child, 'rss'),
    resetPeak: () => ask(child, 'reset'),
    async close() {
      if (!child.connected) return;
      const exited = once(child, 'exit');
      child.send('close');
      await exited;
    },
  };
}

async function ask(child: ChildProcess, message: string): Promise<Memory> {
  const reply = once(child, 'message');
  child.send(message);
  return (await reply)[0] as Memory;
}
