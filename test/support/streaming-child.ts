/**
 * Child process for streaming.test.ts and grpc-large-stream.test.ts: a gateway alone in its
 * process, so its resident memory can be measured without the test's client and upstream in it,
 * serving `/big` from UPSTREAM_ORIGIN (a target url: `http://…`, `h2c://…`). Started with
 * GATEHOUSE_STREAMING_CHILD=1, UPSTREAM_ORIGIN and optionally GATEHOUSE_CHILD_ENV (JSON: more
 * settings, such as `{"H2C":"true"}`); does nothing otherwise (the test runner may load every file
 * under test/).
 *
 * Messages in: `'rss'` and `'reset'`, each answered with `{ rss, peak, cpuMicros }` (bytes: the
 * peak since the last reset, which `'reset'` then starts anew; the process's CPU time so far, user
 * and system, in µs); `'close'`. Message out at start: `{ port }`.
 */
import { service } from './samples.js';
import { startDataPlane } from './data-plane.js';

const SAMPLE_MS = 10;

/**
 * `gc` from `--expose-gc`. A minor collection before each sample makes RSS follow live memory
 * rather than how lazily V8 frees the socket buffers that streaming leaves behind as garbage
 * (tens of MiB, by its external-memory heuristics). Buffered bodies are live, so they still show.
 */
const collectYoungGarbage = (globalThis as { gc?: (options: { type: 'minor' | 'major' }) => void }).gc;

async function main(upstreamOrigin: string, env: Record<string, string>, send: (message: unknown) => void): Promise<void> {
  const gateway = await startDataPlane({ env, services: [service({ path: '/big', targetUrl: upstreamOrigin })] });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    collectYoungGarbage?.({ type: 'minor' });
    peak = Math.max(peak, process.memoryUsage().rss);
  }, SAMPLE_MS);
  process.on('message', (message) => {
    const rss = process.memoryUsage().rss;
    const cpu = process.cpuUsage();
    if (message === 'reset' || message === 'rss') send({ rss, peak: Math.max(peak, rss), cpuMicros: cpu.user + cpu.system });
    if (message === 'reset') peak = rss;
    if (message === 'close') {
      clearInterval(sampler);
      void gateway.close().then(() => process.disconnect());
    }
  });
  send({ port: gateway.port });
}

if (process.env.GATEHOUSE_STREAMING_CHILD === '1' && process.send && process.env.UPSTREAM_ORIGIN) {
  const send = process.send.bind(process);
  const env = JSON.parse(process.env.GATEHOUSE_CHILD_ENV ?? '{}') as Record<string, string>;
  await main(process.env.UPSTREAM_ORIGIN, env, (message) => send(message));
}
