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
