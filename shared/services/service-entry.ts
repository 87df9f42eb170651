/**
 * Where a service's pages start: its path plus `/` (`/spa` → `/spa/`), and `/` for the service at
 * `/`. A browser resolves an app's relative links (`app.js`, `./api`) against the last `/` of the
 * page's URL, so `/spa` would load `/app.js`, outside the service; the data plane redirects the
 * bare prefix here (design.md §5 "bare prefix") and every page of the gateway links here.
 * `path` is a registered service path (no trailing `/` except `/` itself); the result never
 * starts with `//`.
 */
export function serviceEntryPath(path: string): string {
  return path.endsWith('/') ? path : `${path}/`;
}
