import { isIP } from 'node:net';

/**
 * Reading the hops a trusted proxy reports (design.md §5 "client IP"): `X-Forwarded-For`'s entries
 * and `Forwarded`'s `for=` values (RFC 7239 §4, §6), each as the bare IP address it names, or
 * `undefined` for a value that names none. An IP address is what node:net `isIP` accepts.
 */

/** `[IPv6]` or `[IPv6]:port` (RFC 7239 §6: IPv6 in brackets, as in URIs, RFC 3986 §3.2.2). */
const BRACKETED = /^\[([^\]]+)\](?::(.*))?$/;
/** `IPv4:port`: unbracketed, only IPv4 takes a port (an IPv6 address's last group would read as one). */
const WITH_PORT = /^([^:]+):(.*)$/;
/** A port after a node (RFC 7239 §6: `node-port = port / obfport`); dropped from the address. */
const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;

/** `::ffff:192.0.2.1` (an IPv4-mapped IPv6 address, RFC 4291 §2.5.5.2) as `192.0.2.1`; others unchanged. */
export function unmapIpv4(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/**
 * The bare IP address of one hop as a proxy wrote it: `192.0.2.1`, `192.0.2.1:5678`,
 * `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:443` (IPv4-mapped IPv6 shown as IPv4); undefined
 * for anything else: RFC 7239 §6.3's obfuscated identifiers (`_hidden`), `unknown` (§6.2), an
 * IPv4 address in brackets, an IPv6 address with a port and no brackets, a port that is not one,
 * markup, an empty value.
 */
export function hopAddress(value: string): string | undefined {
  if (isIP(value) !== 0) return unmapIpv4(value);
  const hop = splitHop(value);
  if (hop === undefined || isIP(hop.host) !== hop.family) return undefined;
  if (hop.port !== undefined && !isPort(hop.port)) return undefined;
  return unmapIpv4(hop.host);
}

/** A hop's host, the family its form allows (6 in brackets, 4 otherwise) and its port if any. */
function splitHop(value: string): { host: string; family: 4 | 6; port: string | undefined } | undefined {
  const bracketed = BRACKETED.exec(value);
  if (bracketed !== null) return { host: bracketed[1]!, family: 6, port: bracketed[2] };
  const withPort = WITH_PORT.exec(value);
  return withPort === null ? undefined : { host: withPort[1]!, family: 4, port: withPort[2] };
}

function isPort(port: string): boolean {
  return PORT.test(port) && (port.startsWith('_') || Number(port) <= 65_535);
}

/**
 * The hops of `X-Forwarded-For` (every field joined with `, `), left to right, as written:
 * entries split on `,` and trimmed; empty ones (`a,,b`) skipped, as proxy-addr does.
 */
export function xForwardedForHops(field: string): string[] {
  return field
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * The `for=` value of each element of `Forwarded` (RFC 7239 §4; every field joined with `, `),
 * left to right, unquoted: undefined for an element without one or with two (§4: a parameter
 * occurs once per element). Empty elements are skipped (RFC 9110 §5.6.1). A field that does not
 * parse (an unclosed quoted-string, a pair without `=`) is one hop that names no address.
 */
export function forwardedForHops(field: string): Array<string | undefined> {
  const hops: Array<string | undefined> = [];
  let element: { pairs: number; hop: string | undefined; repeated: boolean } = { pairs: 0, hop: undefined, repeated: false };
  for (let at = 0; ; ) {
    const pair = readPair(field, at);
    if (pair === undefined) return [undefined];
    if (pair.name !== '') element.pairs++;
    if (pair.name.toLowerCase() === 'for') {
      element.repeated ||= element.hop !== undefined;
      element.hop = pair.value;
    }
    const delimiter = field[pair.end];
    if (delimiter !== ';') {
      if (element.pairs > 0) hops.push(element.repeated ? undefined : element.hop);
      element = { pairs: 0, hop: undefined, repeated: false };
    }
    if (delimiter === undefined) return hops;
    at = pair.end + 1;
  }
}

/**
 * One `forwarded-pair` (RFC 7239 §4: `token "=" ( token / quoted-string )`) from `at`, with
 * optional whitespace around it, or an empty one between delimiters; `end` is the index of the
 * `;` or `,` after it, or the field's length. Undefined when the text there is no pair.
 */
function readPair(field: string, at: number): { name: string; value: string; end: number } | undefined {
  // Scanned only to the pair's end, so a field of many pairs costs its length, not its square.
  let equals = at;
  while (equals < field.length && field[equals] !== '=' && field[equals] !== ';' && field[equals] !== ',') equals++;
  if (field[equals] !== '=') return field.slice(at, equals).trim() === '' ? { name: '', value: '', end: equals } : undefined;
  const name = field.slice(at, equals).trim();
  if (name === '') return undefined;
  const start = skipSpaces(field, equals + 1);
  if (field[start] !== '"') {
    const end = nextDelimiter(field, start);
    return { name, value: field.slice(start, end).trim(), end };
  }
  const quoted = readQuoted(field, start);
  if (quoted === undefined) return undefined;
  const end = skipSpaces(field, quoted.end);
  return end === field.length || field[end] === ';' || field[end] === ',' ? { name, value: quoted.value, end } : undefined;
}

/** A quoted-string from the `"` at `at` (RFC 9110 §5.6.4, `\` escapes one character); `end` is past its closing `"`. */
function readQuoted(field: string, at: number): { value: string; end: number } | undefined {
  let value = '';
  for (let i = at + 1; i < field.length; i++) {
    const char = field[i]!;
    if (char === '"') return { value, end: i + 1 };
    if (char === '\\') i++;
    value += field[i] ?? '';
  }
  return undefined;
}

function nextDelimiter(field: string, at: number): number {
  for (let i = at; i < field.length; i++) if (field[i] === ';' || field[i] === ',') return i;
  return field.length;
}

function skipSpaces(field: string, at: number): number {
  let i = at;
  while (field[i] === ' ' || field[i] === '\t') i++;
  return i;
}
