/** Single requests from the test process with a hang limit, and the figures a scenario prints. */
import type { TestContext } from 'node:test';
import { request } from 'undici';

/** No request may hang longer than this (README "Running a fleet"). */
export const HANG_LIMIT_MS = 2_000;

/** One answer: its status, or the error's code when none came within the limit; and how long it took. */
export interface Probe {
  status: number | string;
  ms: number;
}

/** GET `url` with `headers`, JSON preferred, giving up after {@link HANG_LIMIT_MS} (then `status` is the error code). */
export async function probe(url: string, headers: Record<string, string> = {}): Promise<Probe> {
  const start = Date.now();
  try {
    const response = await request(url, { headers: { accept: 'application/json', ...headers }, headersTimeout: HANG_LIMIT_MS, bodyTimeout: HANG_LIMIT_MS });
    await response.body.dump();
    return { status: response.statusCode, ms: Date.now() - start };
  } catch (error) {
    return { status: String((error as { code?: unknown }).code ?? error), ms: Date.now() - start };
  }
}

/** Prints `figures` under `title` in the test's output (node:test diagnostics), one line. */
export function report(t: TestContext, title: string, figures: Record<string, unknown>): void {
  const text = Object.entries(figures).map(([name, value]) => `${name}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`).join(' ');
  t.diagnostic(`${title}: ${text}`);
}
