/** Waiting for a condition no event announces (not a test file itself). */

/**
 * Resolves with the milliseconds waited once `condition` holds, checking every `intervalMs`. For
 * conditions no event announces: another process's state, a pub/sub message reaching another
 * connection. A condition that throws counts as not holding yet (a server still starting refuses
 * connections), unless `fatal` says the error ends the wait: then it rejects at once. Rejects after
 * `timeoutMs`, naming `what` and the condition's last error if any.
 */
export async function eventually(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  intervalMs = 25,
  fatal: (error: unknown) => boolean = () => false,
): Promise<number> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    const holds = await Promise.resolve()
      .then(condition)
      .catch((error: unknown) => ((lastError = error), false));
    if (holds) return Date.now() - started;
    if (lastError !== undefined && fatal(lastError)) throw new Error(`stopped waiting for ${what}: ${String(lastError)}`, { cause: lastError });
    if (Date.now() - started > timeoutMs) {
      const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
