/** Bytes per unit: SI units are powers of 1000, IEC units (KiB …) powers of 1024, case-insensitive. */
const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12,
  kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
};

/**
 * A size as operators write it (`50GB`, `512MiB`, `1.5TB`, `1000000` bytes) in whole bytes, or
 * undefined when `text` is not one.
 */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = UNITS[(match[2] || 'b').toLowerCase()];
  return unit === undefined ? undefined : Math.floor(Number(match[1]) * unit);
}
