/** Waiting for a condition no event announces (not a test file itself). */

/**
 * Resolves with the milliseconds waited once `condition` holds, checking every `intervalMs`. For
 * conditions no event announces: another process's state, a pub/sub message reaching another
 * connection. A condition that throws counts as not holding yet (a server still starting refuses
 * connections). Rejects after `timeoutMs`, naming `what` and the condition's last error if any.
 */
export async function eventually(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<number> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    const holds = await Promise.resolve()
      .then(condition)
      .catch((error: unknown) => ((lastError = error), false));
    if (holds) return Date.now() - started;
    if (Date.now() - started > timeoutMs) {
      const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
