import type { ServerResponse } from 'node:http';

/**
 * A response's request id (design.md §3.10), kept on the response object rather than set with
 * `setHeader`: once a response has a field of its own, `writeHead` with a list of fields (every
 * proxied answer) takes the slow path, each field removed and set again (0.75 µs a response).
 * Each writer of a head adds it instead: the exchange to the target's fields, the gateway's
 * answers (http-response.ts, the bare prefix, the JWKS) to theirs.
 */
const kRequestId = Symbol('gatehouse.requestId');
type Carrier = ServerResponse & { [kRequestId]?: string };

/** The field name, lowercased. */
export const REQUEST_ID_FIELD = 'x-request-id';

/** Gives `res` the request id its head will carry. */
export function setRequestId(res: ServerResponse, requestId: string): void {
  (res as Carrier)[kRequestId] = requestId;
}

/** The request id of `res`: the one given to it, else one set as a field (the admin process's), else undefined. */
export function requestIdOf(res: ServerResponse): string | undefined {
  const given = (res as Carrier)[kRequestId];
  if (given !== undefined) return given;
  const field = res.getHeader(REQUEST_ID_FIELD);
  return typeof field === 'string' ? field : undefined;
}

/** `fields` with the request id of `res` added, for a `writeHead` with an object of fields. */
export function withRequestId<T extends Record<string, unknown>>(res: ServerResponse, fields: T): T {
  const requestId = (res as Carrier)[kRequestId];
  return requestId === undefined ? fields : { ...fields, [REQUEST_ID_FIELD]: requestId };
}
