/**
 * Moving a path between the public side (`/prefix/rest`) and the target side (`/base/rest`),
 * design.md §3.6–3.7. Prefixes and base paths never end in `/` (`''` stands for the root), so joining
 * them with a remainder that starts with `/` puts exactly one `/` between them.
 */

const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;

/**
 * `base` followed by `rest`, where `rest` is empty or starts with `/`, `?` or `#` (the remainder of
 * a request-target after its prefix, as routing-key.ts `remainderAfter` gives it, then the query). An empty path becomes `base`, or `/`
 * when `base` is the root too: `('', '')` → `/`, `('/b', '?q')` → `/b?q`, `('', '?q')` → `/?q`.
 */
export function joinPath(base: string, rest: string): string {
  if (rest.length === 0) return base || '/';
  if (base.length === 0 && rest.charCodeAt(0) !== SLASH) return '/' + rest;
  return base + rest;
}

/**
 * The part of `path` after `base` when `path` is `base` itself or lies under it on a segment
 * boundary (followed by `/`, `?` or `#`); undefined otherwise. `('/b/x', '/b')` → `/x`,
 * `('/b?q', '/b')` → `?q`, `('/bx', '/b')` → undefined, and with the root base (`''`) every path
 * is its own remainder.
 */
export function remainderUnder(path: string, base: string): string | undefined {
  if (base.length === 0) return path;
  if (!path.startsWith(base)) return undefined;
  if (path.length === base.length) return '';
  const next = path.charCodeAt(base.length);
  return next === SLASH || next === QUESTION || next === HASH ? path.slice(base.length) : undefined;
}
