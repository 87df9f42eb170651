/**
 * The client host's load (run inside its namespace by load.ts, not a test file): `concurrency`
 * loops each send GET `<target><path>/<tag>-<n>` (a unique marker per request, to find its
 * access-log record), the targets taken in turn as a round-robin load balancer would, with
 * `paceMs` between one loop's requests. Every outcome is printed as one JSON line on stdout:
 * `{ n, marker, target, start, ms, status }` or `{ …, error }`. It stops at `maxRequests`, after
 * `maxMs`, or when its stdin closes (the test's stop), lets the requests in flight finish, prints
 * `{ "done": <sent> }` and exits.
 *
 * Usage: node load-client.js '<LoadOptions as JSON>'
 */
import { Agent, request } from 'undici';

/** What the load does; every bound is required (a load is bounded in count and time). */
export interface LoadOptions {
  /** Proxy origins (`http://198.18.x.y:8080`). */
  targets: string[];
  /** The service path the markers go under (`/app/load`). */
  path: string;
  /** Unique per load: markers are `<tag>-<n>`. */
  tag: string;
  /** Cookie header sent with every request ('' for none). */
  cookie: string;
  concurrency: number;
  paceMs: number;
  maxRequests: number;
  maxMs: number;
  /** A request with no complete response after this long is counted as an error (`timeout`). */
  timeoutMs: number;
}

/** One request's outcome, as printed. */
export interface LoadOutcome {
  n: number;
  marker: string;
  target: string;
  /** When it was sent (epoch ms) and how long it took. */
  start: number;
  ms: number;
  status?: number;
  error?: string;
}

async function send(options: LoadOptions, agent: Agent, n: number): Promise<LoadOutcome> {
  const target = options.targets[n % options.targets.length]!;
  const marker = `${options.tag}-${n}`;
  const start = Date.now();
  const headers: Record<string, string> = { accept: 'application/json', ...(options.cookie === '' ? {} : { cookie: options.cookie }) };
  try {
    const response = await request(`${target}${options.path}/${marker}`, { headers, dispatcher: agent, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
    await response.body.dump();
    return { n, marker, target, start, ms: Date.now() - start, status: response.statusCode };
  } catch (error) {
    return { n, marker, target, start, ms: Date.now() - start, error: String((error as { code?: unknown }).code ?? error) };
  }
}

async function run(options: LoadOptions): Promise<void> {
  const agent = new Agent({ connections: options.concurrency, connectTimeout: options.timeoutMs });
  const deadline = Date.now() + options.maxMs;
  let stopped = false;
  process.stdin.on('end', () => (stopped = true)).on('close', () => (stopped = true)).resume();
  let next = 0;
  const loop = async () => {
    while (!stopped && next < options.maxRequests && Date.now() < deadline) {
      const outcome = await send(options, agent, next++);
      process.stdout.write(`${JSON.stringify(outcome)}\n`);
      await new Promise((resolve) => setTimeout(resolve, options.paceMs));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  process.stdout.write(`${JSON.stringify({ done: next })}\n`);
  await agent.close();
  process.exit(0);
}

await run(JSON.parse(process.argv[2]!) as LoadOptions);
