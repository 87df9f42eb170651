import type { Database } from 'better-sqlite3';

/** How long a name is remembered, in ms: a renamed service shows its new name in the export within this. */
const NAME_TTL_MS = 60_000;

/**
 * Service names by id, read from the registry's table and remembered for a minute, for the
 * access-log export's `gatehouse.service.name` (the writer thread has no registry of its own).
 * @returns a function giving the name of a service id, or undefined for a deleted service.
 */
export function serviceNames(db: Database, now: () => number = Date.now): (serviceId: string) => string | undefined {
  const select = db.prepare<[string], { name: string }>('SELECT name FROM services WHERE id = ?');
  const names = new Map<string, { name: string | undefined; until: number }>();
  return (serviceId) => {
    const known = names.get(serviceId);
    if (known && known.until > now()) return known.name;
    const name = select.get(serviceId)?.name;
    names.set(serviceId, { name, until: now() + NAME_TTL_MS });
    return name;
  };
}
