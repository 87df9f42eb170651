/** The longest return path or address a sign-in takes, in characters (`returnTo`, `rd`). */
export const MAX_RETURN_ADDRESS_LENGTH = 2048;
const PLACEHOLDER_ORIGIN = 'http://gatehouse.invalid';
const UNSAFE = /[\u0000-\u001f\u007f\\]/;
/** A path a browser would read as another host: `//host` or `/\host` (WHATWG URL reads `\` as `/`). */
const SCHEME_RELATIVE = /^[/\\]{2}/;

/**
 * Where a login may send the browser back to (design.md §4): only a same-origin relative path,
 * judged on its normalised form (WHATWG URL: dot segments, `%2e`, resolved), since that form is
 * what the `Location` carries. Anything else (`//host`, `/\host`, `https://host`, `javascript:`,
 * control characters that URL parsers strip, or a path such as `/.//host` or `/a/..//host` that
 * normalises to `//host`; design.md §4.1) becomes `/`, so a crafted login link can never be an open
 * redirect.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || value.length > MAX_RETURN_ADDRESS_LENGTH || !value.startsWith('/') || SCHEME_RELATIVE.test(value) || UNSAFE.test(value)) return '/';
  const url = new URL(value, PLACEHOLDER_ORIGIN);
  if (url.origin !== PLACEHOLDER_ORIGIN || SCHEME_RELATIVE.test(url.pathname)) return '/';
  return url.pathname + url.search + url.hash;
}
