import type { IncomingMessage } from 'node:http';

const CLOSE: Readonly<Record<string, string>> = Object.freeze({ connection: 'close' });
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The fields that end `req`'s connection after its answer: `Connection: close` over HTTP/1.1
 * (RFC 9112 §9.6); none over HTTP/2, where the field is malformed (RFC 9113 §8.2.2, node:http2
 * drops it with a warning) and other streams share the connection: the answer ends its stream alone.
 */
export function closingFields(req: IncomingMessage): Readonly<Record<string, string>> {
  return req.httpVersionMajor === 2 ? NONE : CLOSE;
}
