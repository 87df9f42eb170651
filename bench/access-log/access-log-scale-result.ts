/**
 * What the access-log scale scenario (access-log-scale.ts) runs with and what it finds: the shapes
 * its report (report.ts) prints and writes and its targets (targets.ts) are judged on, apart from
 * the scenario so that those modules need not import it.
 */
import type { PollStats, ReadResult } from './access-log-admin-reads.js';
import type { DayDropResult } from './access-log-day-drop.js';
import type { ExportCostResult } from './access-log-export-cost.js';
import type { FillResult } from './access-log-fill.js';
import type { PacedLoadResult } from '../paced-load.js';

/** The scenario's settings (access-log-scale.ts `readScaleSettings` reads them). */
export interface ScaleSettings {
  /** Run it in `npm run bench` (BENCH_ACCESS_LOG_SCALE, 1; `0` leaves it out). */
  enabled: boolean;
  /** Records of the big and the small gateway (BENCH_ACCESS_LOG_RECORDS / `--records`, 10,000,000; BENCH_ACCESS_LOG_SMALL_RECORDS / `--small-records`, 100,000). */
  bigRecords: number;
  smallRecords: number;
  /** Whole UTC days before today the records are spread over (29; the retention is 30). */
  days: number;
  /** Timed repetitions of each read on each gateway, after a first one (20). */
  readRepeats: number;
  /** The deep page at a fixed offset: 90,000, or 90 % of the small log when that is smaller. */
  fixedOffset: number;
  /** The proxied load: requests/s, seconds per run, and rounds of (idle, polling) runs (2,000/s, 20 s, 2). */
  pacedRate: number;
  pacedSeconds: number;
  pacedRounds: number;
  /** Keep-alive connections of the proxied load (64). */
  pacedConnections: number;
  /** The polling console's interval, in ms (200). */
  pollIntervalMs: number;
  /** The export-cost runs: records per run and rounds of (without, with) (500,000, 2). */
  exportRecords: number;
  exportRounds: number;
}

/** One run of the proxied load. */
export interface PollingRun {
  /** Whether a console polled during it. */
  polling: boolean;
  load: PacedLoadResult;
  /** The polling console's reads (null when idle). */
  poll: PollStats | null;
  /** The gateway process's CPU during it (all its threads: proxying, storing, reading), in cores. */
  gatewayCores: number;
  /** Other programs' CPU during it, in cores. */
  otherCores: number;
  /** Runs before this one thrown away because other programs took more than QUIET_CORES (access-log-scale.ts). */
  discarded: number;
}

/** What one run of the scenario measured: printed by report.ts, and part of the bench's results. */
export interface AccessLogScaleResult {
  settings: ScaleSettings;
  /** The gateways, small first: their name, and what their fill did (records, speed, bytes). */
  gateways: { name: string; fill: FillResult }[];
  reads: ReadResult[];
  polling: { rate: number; durationS: number; intervalMs: number; runs: PollingRun[] };
  dayDrop: DayDropResult;
  exportCost: ExportCostResult;
  /** The scenario's wall time, in s. */
  wallSeconds: number;
}
