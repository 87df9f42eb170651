/**
 * A `User-Agent` as a person reads it in a sessions list ("Chrome 126 on Windows", "Firefox on
 * Android", "curl 8.5"): the browser and its major version, and the system. Only a summary, for
 * recognising one's own devices; the pages keep the full string in a `title`.
 */

/** Browsers by their product token, most specific first (Edge and Opera also say Chrome, Chrome also says Safari). */
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\b(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, 'Firefox'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS|Chromium)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
];

/** Systems, most specific first (Android says Linux, iOS says "like Mac OS X"). */
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** Longest summary of a client that is no known browser (its first product token). */
const MAX_PRODUCT_LENGTH = 40;

/** `userAgent` summarised; `Unknown browser` when it is empty. */
export function userAgentText(userAgent: string): string {
  const ua = userAgent.trim();
  if (ua === '') return 'Unknown browser';
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua));
  const system = SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1];
  if (browser) {
    const version = browser[0].exec(ua)?.[1];
    const name = version ? `${browser[1]} ${version}` : browser[1];
    return system ? `${name} on ${system}` : name;
  }
  if (ua.startsWith('Mozilla/')) return system ? `A browser on ${system}` : 'Unknown browser';
  // Not a browser (curl/8.5.0, python-requests/2.31): its first product and major version.
  const product = /^([A-Za-z][\w.-]*)(?:\/v?(\d+))?/.exec(ua);
  if (!product) return 'Unknown browser';
  const text = product[2] ? `${product[1]} ${product[2]}` : product[1]!;
  return text.length > MAX_PRODUCT_LENGTH ? `${text.slice(0, MAX_PRODUCT_LENGTH)}…` : text;
}
