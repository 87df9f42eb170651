/**
 * Client traffic for tests of a service's pool of targets (target-process.ts): a keep-alive
 * client whose every answer says which target gave it, load bounded in count and in time, and the
 * per-target figures of `/metrics`.
 */
import { Pool, type Dispatcher } from 'undici';
import type { TargetAnswer } from './target-process.js';

/** One request's outcome, as the client saw it. */
export interface Reply {
  /** Its `X-Test-Request` id. */
  id: string;
  method: string;
  /** 0 when no response arrived (connection reset, the client's time limit). */
  status: number;
  /** The target that answered (from its JSON), when one did. */
  target: string | undefined;
  /** The target's JSON answer, when one answered. */
  answer: TargetAnswer | undefined;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number;
  /** Why no response arrived. */
  error: string | undefined;
}

export interface SendOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string;
  /** Longest the client waits for the whole answer (default 5 s); then status 0. */
  timeoutMs?: number;
  /** Aborts the request (then status 0). */
  signal?: AbortSignal;
}

/** The last `X-Test-Request` id given, across every client of this process: ids are unique. */
let lastRequestId = 0;

/** A keep-alive client of one gateway origin with at most `connections` connections. */
export class PoolClient {
  /** `http://host:port`, as given. */
  readonly origin: string;
  readonly #pool: Pool;

  constructor(origin: string, connections = 16) {
    this.origin = origin;
    this.#pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 10_000 });
  }

  /** Sends one request with a fresh `X-Test-Request` id (unique in this process); never throws (a failure is status 0). */
  async send(path: string, options: SendOptions = {}): Promise<Reply> {
    const id = `r${++lastRequestId}`;
    const method = options.method ?? 'GET';
    const startedAt = Date.now();
    const signals = [AbortSignal.timeout(options.timeoutMs ?? 5_000), ...(options.signal ? [options.signal] : [])];
    try {
      const response = await this.#pool.request({
        path,
        method,
        headers: { 'x-test-request': id, ...options.headers },
        body: options.body,
        signal: AbortSignal.any(signals),
      });
      const text = await response.body.text();
      const answer = parseAnswer(text);
      return { id, method, status: response.statusCode, target: answer?.target, answer, text, headers: response.headers, startedAt, endedAt: Date.now(), error: undefined };
    } catch (error) {
      return { id, method, status: 0, target: undefined, answer: undefined, text: '', headers: {}, startedAt, endedAt: Date.now(), error: String(error) };
    }
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}

function parseAnswer(text: string): TargetAnswer | undefined {
  if (!text.startsWith('{"target"')) return undefined;
  try {
    return JSON.parse(text) as TargetAnswer;
  } catch {
    return undefined;
  }
}

export interface LoadOptions {
  /** Requests in flight at once. */
  concurrency: number;
  /** Most requests sent in all. */
  total: number;
  /** Longest the load runs, in ms: no request starts after it. */
  maxMs: number;
  /** Stops sending new requests once it returns true (checked before each). */
  until?: () => boolean;
  /** Sends request number `n` (from 0). */
  send: (n: number) => Promise<Reply>;
}

/**
 * Runs `concurrency` loops sending requests one after another until `total` were sent, `maxMs`
 * passed or `until()` holds; resolves with every reply once the last has settled.
 */
export async function runLoad(options: LoadOptions): Promise<Reply[]> {
  const replies: Reply[] = [];
  const deadline = Date.now() + options.maxMs;
  let sent = 0;
  const loop = async (): Promise<void> => {
    while (sent < options.total && Date.now() < deadline && !(options.until?.() ?? false)) {
      replies.push(await options.send(sent++));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  return replies;
}

/** How many of `replies` each target answered, by target id. */
export function countByTarget(replies: readonly Reply[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const reply of replies) if (reply.target !== undefined) counts.set(reply.target, (counts.get(reply.target) ?? 0) + 1);
  return counts;
}

/** A sample's value in a Prometheus text exposition, `labels` matched exactly; undefined when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.indexOf('}');
    const have = line
      .slice(name.length + 1, close)
      .split(',')
      .filter(Boolean)
      .sort()
      .join(',');
    if (have === wanted) return Number(line.slice(close + 1).trim());
  }
  return undefined;
}

/** A target's figures in `/metrics`: `gatehouse_target_{healthy,requests_total,errors_total}`. */
export interface TargetFigures {
  healthy: number | undefined;
  requests: number | undefined;
  errors: number | undefined;
}

export function targetFigures(text: string, serviceId: string, targetUrl: string): TargetFigures {
  const labels = { service: serviceId, target: targetUrl };
  return {
    healthy: metricValue(text, 'gatehouse_target_healthy', labels),
    requests: metricValue(text, 'gatehouse_target_requests_total', labels),
    errors: metricValue(text, 'gatehouse_target_errors_total', labels),
  };
}
