import type { OutgoingHttpHeaders } from 'node:http';

/**
 * A flat `[name, value, …]` field list (request-headers.ts, response-headers.ts) as node:http's
 * and node:http2's header object: names lowercased, a repeated name's values in an array, in
 * order. `skip` leaves out the names it is true for (already lowercased).
 */
export function fieldObject(flat: readonly (string | string[])[], skip?: (name: string) => boolean): OutgoingHttpHeaders {
  const fields: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = String(flat[i]).toLowerCase();
    if (skip?.(name)) continue;
    const value = flat[i + 1]!;
    const seen = fields[name];
    if (seen === undefined) fields[name] = value;
    else fields[name] = [...(Array.isArray(seen) ? seen : [seen]), ...(Array.isArray(value) ? value : [value])];
  }
  return fields;
}
