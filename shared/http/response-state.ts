import type { ServerResponse } from 'node:http';

/** The part of node:http2's compatibility API's response these functions read. */
type MaybeHttp2Response = ServerResponse & { stream?: { destroyed: boolean; rstCode?: number } };

/**
 * Whether `res` can no longer reach its client: node:http's response destroyed with its socket,
 * or an HTTP/2 response's stream closed (the compatibility API's response has no `destroyed`).
 */
export function isClientGone(res: ServerResponse): boolean {
  return res.destroyed || (res as MaybeHttp2Response).stream?.destroyed === true;
}

/**
 * Whether `res` is an HTTP/2 response whose stream was reset (the client's RST_STREAM, or an
 * error): the compatibility API then reports it `writableFinished`, as if it had been answered whole.
 */
export function wasReset(res: ServerResponse): boolean {
  const code = (res as MaybeHttp2Response).stream?.rstCode;
  return code !== undefined && code !== 0;
}
