/** Anything that can be closed: a server, a pool, a store, a database (sync or async `close`). */
export interface Closable {
  close(): unknown;
}

/**
 * Closes `closables` one after the other, each once the previous one's `close` has settled, so
 * that what serves requests stops before what it uses (a server before its stores, a writer before
 * its database). `undefined` entries (parts never opened) are skipped.
 *
 * @throws the first failing `close`'s error; the entries after it are then left open.
 */
export async function closeInOrder(...closables: (Closable | undefined)[]): Promise<void> {
  for (const closable of closables) await closable?.close();
}
