/**
 * The reads an admin makes of a service's access log, timed against gateways of the access-log
 * scale scenario (access-log-scale.ts): the admin API's `GET /api/services/:id/logs` with an API
 * token (the newest page, deep pages, each filter) and the console page `/dashboard/services/:id`
 * with an admin session; and a console that polls while proxied traffic is measured. Every request
 * goes to loopback, over one keep-alive connection per gateway, one at a time.
 */
import { Client } from 'undici';
import { COMMON_PATH_FRAGMENT, USERS } from './access-log-records.js';
import type { ScaleGateway } from './access-log-scale-gateway.js';

/** One of the admin's reads: its name, and its path for a gateway. */
export interface AdminRead {
  name: string;
  /** `console`: the HTML page with the admin session; else the API with the token. */
  kind: 'api' | 'console';
  path: (gateway: ScaleGateway) => string;
}

/** One read's times on one gateway, in ms (request sent to the end of the body). */
export interface ReadTimes {
  /** The first request: the reader thread opens the day files (and the page cache is cold for them). */
  firstMs: number;
  medianMs: number;
  p90Ms: number;
  maxMs: number;
  /** `total` of the last API answer (null for the console page), and whether it was `partial`. */
  total: number | null;
  partial: boolean;
}

/** A read on every gateway. */
export interface ReadResult {
  name: string;
  /** The path on the first gateway (ids and offsets differ per gateway). */
  example: string;
  /** By gateway name. */
  times: Record<string, ReadTimes>;
}

const ONE_MINUTE_MS = 60_000;
const ONE_DAY_MS = 86_400_000;
/** The user of the `user` filter: one of average traffic (access-log-records.ts skews users). */
const FILTERED_USER = USERS[10]!;

/**
 * The admin's reads: the newest page; a deep page at half the log and one at a fixed offset both
 * logs hold; a status class; a time range whose ends cut minutes (10 days back, 6 h 17 s long);
 * method and path; a user; and the console page. All pages of 50 records.
 */
export function adminReads(fixedOffset: number): AdminRead[] {
  const logs = (g: ScaleGateway, query: string) => `/api/services/${g.serviceId}/logs?limit=50${query}`;
  const range = (g: ScaleGateway) => {
    const from = Math.floor((g.fill.toMs - 10 * ONE_DAY_MS) / ONE_MINUTE_MS) * ONE_MINUTE_MS + 30_250;
    const to = from + 6 * 3_600_000 + 17_000;
    return `&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
  };
  return [
    { name: 'newest page', kind: 'api', path: (g) => logs(g, '') },
    { name: 'deep page (half the log)', kind: 'api', path: (g) => logs(g, `&offset=${Math.floor(g.fill.records / 2)}`) },
    { name: `deep page (offset ${fixedOffset.toLocaleString('en-US')})`, kind: 'api', path: (g) => logs(g, `&offset=${fixedOffset}`) },
    { name: 'status 5xx', kind: 'api', path: (g) => logs(g, '&status=5xx') },
    { name: 'time range (6 h, cut minutes)', kind: 'api', path: (g) => logs(g, range(g)) },
    { name: 'method POST + path', kind: 'api', path: (g) => logs(g, `&method=POST&path=${encodeURIComponent(COMMON_PATH_FRAGMENT)}`) },
    { name: 'user', kind: 'api', path: (g) => logs(g, `&user=${encodeURIComponent(FILTERED_USER)}`) },
    { name: 'console page', kind: 'console', path: (g) => `/dashboard/services/${g.serviceId}` },
  ];
}

/** Keep-alive connections to each gateway, for the reads. */
export class AdminClients {
  readonly #clients = new Map<string, Client>();

  /** Sends `read` to `gateway` once; resolves with its time in ms and what the answer said. */
  async read(gateway: ScaleGateway, read: AdminRead): Promise<{ ms: number; total: number | null; partial: boolean }> {
    let client = this.#clients.get(gateway.name);
    if (!client) this.#clients.set(gateway.name, (client = new Client(gateway.stack.origin, { pipelining: 1 })));
    const headers = read.kind === 'console' ? { cookie: gateway.adminCookie } : { authorization: gateway.authorization };
    const path = read.path(gateway);
    const started = performance.now();
    const response = await client.request({ method: 'GET', path, headers });
    const body = await response.body.text();
    const ms = performance.now() - started;
    if (response.statusCode !== 200) throw new Error(`${gateway.name} GET ${path}: ${response.statusCode} ${body.slice(0, 300)}`);
    if (read.kind === 'console') return { ms, total: null, partial: false };
    const page = JSON.parse(body) as { total: number; partial?: true; logs: unknown[] };
    return { ms, total: page.total, partial: page.partial === true };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
    this.#clients.clear();
  }
}

/**
 * Times each read on each gateway: a first (cold) request each, then `repeats` rounds in which
 * every read goes to every gateway in turn (the gateways' order reversed every other round), so a
 * slow spell of the machine falls on all of them.
 */
export async function timeReads(gateways: readonly ScaleGateway[], reads: readonly AdminRead[], repeats: number, clients: AdminClients): Promise<ReadResult[]> {
  const samples = reads.map(() => new Map<string, number[]>(gateways.map((g) => [g.name, []])));
  const first = reads.map(() => new Map<string, number>());
  const last = reads.map(() => new Map<string, { total: number | null; partial: boolean }>());
  for (const [i, read] of reads.entries()) {
    for (const gateway of gateways) first[i]!.set(gateway.name, (await clients.read(gateway, read)).ms);
  }
  for (let round = 0; round < repeats; round++) {
    const order = round % 2 === 0 ? gateways : [...gateways].reverse();
    for (const [i, read] of reads.entries()) {
      for (const gateway of order) {
        const answer = await clients.read(gateway, read);
        samples[i]!.get(gateway.name)!.push(answer.ms);
        last[i]!.set(gateway.name, { total: answer.total, partial: answer.partial });
      }
    }
  }
  return reads.map((read, i) => ({
    name: read.name,
    example: read.path(gateways[0]!),
    times: Object.fromEntries(
      gateways.map((g) => {
        const sorted = [...samples[i]!.get(g.name)!].sort((a, b) => a - b);
        const at = (q: number) => round2(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
        const { total, partial } = last[i]!.get(g.name) ?? { total: null, partial: false };
        return [g.name, { firstMs: round2(first[i]!.get(g.name)!), medianMs: at(0.5), p90Ms: at(0.9), maxMs: round2(sorted.at(-1) ?? 0), total, partial }];
      }),
    ),
  }));
}

/** What a polling console did. */
export interface PollStats {
  /** Reads made (each tick reads every page given). */
  reads: number;
  medianMs: number;
  maxMs: number;
}

/**
 * A console left open: every `intervalMs` it reads `reads` of `gateway` one after the other (a
 * tick that finds the previous one still running waits for it), until stopped, at most
 * `maxTicks` ticks.
 * @returns `stop`, which resolves with the reads' times once the tick in progress is over.
 */
export function pollConsole(gateway: ScaleGateway, reads: readonly AdminRead[], intervalMs: number, maxTicks: number, clients: AdminClients): { stop(): Promise<PollStats> } {
  let stopped = false;
  const times: number[] = [];
  const loop = (async () => {
    for (let tick = 0; tick < maxTicks && !stopped; tick++) {
      const due = performance.now() + intervalMs;
      for (const read of reads) times.push((await clients.read(gateway, read)).ms);
      const wait = due - performance.now();
      if (wait > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      return { reads: times.length, medianMs: round2(sorted[Math.floor(sorted.length / 2)] ?? 0), maxMs: round2(sorted.at(-1) ?? 0) };
    },
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
