const PLACEHOLDER_ORIGIN = 'http://gatehouse.invalid';
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

/**
 * Where a login may send the browser back to (DESIGN §4): only a same-origin relative path.
 * Anything else (`//host`, `/\host`, `https://host`, `javascript:`, control characters that URL
 * parsers strip) becomes `/`, so a crafted login link can never be an open redirect.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || value.length > 2048 || !value.startsWith('/') || value.startsWith('//') || UNSAFE.test(value)) return '/';
  const url = new URL(value, PLACEHOLDER_ORIGIN);
  return url.origin === PLACEHOLDER_ORIGIN ? url.pathname + url.search + url.hash : '/';
}
