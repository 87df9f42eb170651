import { request } from 'undici';

/**
 * The status of a GET of `url` with `cookie`, or the error's code when it failed; never waits
 * longer than `timeoutMs` (default 2,000 ms) for the head or the body, so a hanging request shows
 * as `UND_ERR_HEADERS_TIMEOUT` instead of stalling the test.
 */
export async function boundedStatus(url: string, cookie: string, timeoutMs = 2_000): Promise<number | string> {
  try {
    const response = await request(url, { headers: { cookie, accept: 'application/json' }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    await response.body.dump();
    return response.statusCode;
  } catch (error) {
    return String((error as { code?: unknown }).code ?? error);
  }
}
