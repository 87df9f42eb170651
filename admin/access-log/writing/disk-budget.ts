import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorCode } from '../../../shared/error-code.js';

/**
 * How much room the access log's day files may take: the configured cap (ACCESS_LOG_MAX_SIZE), and
 * never so much that the filesystem's free space falls below a reserve kept for the registry,
 * sessions and the rest of the machine.
 */
export interface DiskBudget {
  /** ACCESS_LOG_MAX_SIZE in bytes. */
  maxBytes: number;
  /** Free bytes the filesystem keeps; the access log stops growing (and drops its oldest days) below it. */
  reserveBytes: number;
}

/** The reserve: 5 % of the filesystem, at most 1 GiB. */
const RESERVE_SHARE = 0.05;
const RESERVE_MAX = 2 ** 30;
/** Without ACCESS_LOG_MAX_SIZE, the access log may take this share of the filesystem it is on. */
const DEFAULT_SHARE = 0.2;

/**
 * The budget for day files in `dir` (or the nearest existing folder above it): `maxBytes` as
 * configured, else a fifth of the filesystem's size.
 */
export function diskBudgetFor(dir: string, maxBytes: number | undefined): DiskBudget {
  const total = filesystemOf(dir).totalBytes;
  return {
    maxBytes: maxBytes ?? Math.floor(total * DEFAULT_SHARE),
    reserveBytes: Math.min(RESERVE_MAX, Math.floor(total * RESERVE_SHARE)),
  };
}

/** Bytes free for an unprivileged writer on the filesystem of `path` (or of its nearest existing parent), and its size. */
export function filesystemOf(path: string): { freeBytes: number; totalBytes: number } {
  for (let current = path; ; current = dirname(current)) {
    try {
      const stats = statfsSync(current);
      return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
    } catch (error) {
      if (errorCode(error) !== 'ENOENT' || dirname(current) === current) throw error;
    }
  }
}

/**
 * How many more bytes the day files may grow by: the room under the cap, and the room above the
 * filesystem's reserve, whichever is smaller (negative when either is exceeded).
 */
export function headroom(budget: DiskBudget, usedBytes: number, freeBytes: number): number {
  return Math.min(budget.maxBytes - usedBytes, freeBytes - budget.reserveBytes);
}
