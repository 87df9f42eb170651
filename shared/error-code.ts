/**
 * The stable code of an error, looking through `cause` and `AggregateError` (Node reports a
 * refused dual-stack connect as an AggregateError of one error per address).
 */
export function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    current = current instanceof AggregateError ? current.errors[0] : current.cause;
  }
  return undefined;
}

/**
 * A loggable description of an error: its name, code ({@link errorCode}) and message only. Some
 * errors carry secrets in their other properties (ioredis's hold the failed command's arguments:
 * a session's tokens, an access-log batch), so what is logged is rebuilt from these three.
 */
export function describeError(error: unknown): { name: string; code?: string; message: string } {
  const code = errorCode(error);
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  return code === undefined ? { name, message } : { name, code, message };
}
