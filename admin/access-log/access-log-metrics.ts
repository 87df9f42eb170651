import { Counter, type Registry } from 'prom-client';
import { mirrorCount, mirrorGauge } from '../../shared/mirrored-metrics.js';
import type { DeletionReason } from './writing/store-options.js';
import type { WriterTotals } from './writing/writer-protocol.js';

/** The writer's counters that are plain numbers. */
type CountKey = { [K in keyof WriterTotals]: WriterTotals[K] extends number ? K : never }[keyof WriterTotals];

/**
 * The admin side of the access-log pipeline in `/metrics` (ADMIN_PORT; the embedded gateway's
 * too), read from the writer thread's counters as of its last batch:
 * - `gatehouse_access_log_records_stored_total` (rows of their own), `…_summarised_total` (added
 *   to the count of a summary record: their client address was over its share of the day),
 *   `…_duplicates_total` (re-deliveries skipped), `…_expired_total` (arrived after their day was
 *   deleted);
 * - `gatehouse_access_log_records_discarded_total`: not stored because the access log was full
 *   (ACCESS_LOG_MAX_SIZE or the disk's reserve reached with no older day left to delete);
 * - `gatehouse_access_log_addresses_over_share_total`: times a client address filled its share of
 *   a day's budget (each also warned about once);
 * - `gatehouse_access_log_days_deleted_total{reason}`: day files deleted, by `retention` (age,
 *   routine), `max_size` or `disk_reserve` (the budget: warned about and audited);
 * - `gatehouse_access_log_disk_bytes`, `gatehouse_access_log_days`: the day files kept;
 * - `gatehouse_access_log_exported_total`, `…_export_dropped_total`: the OTLP export (README
 *   "Access log export").
 */
export function registerAccessLogMetrics(registry: Registry, totals: () => WriterTotals): void {
  const count = (name: string, help: string, key: CountKey) => mirrorCount(registry, name, help, () => totals()[key]);
  count('gatehouse_access_log_records_stored_total', 'Access-log records stored in the day files as rows of their own.', 'stored');
  count('gatehouse_access_log_records_summarised_total', "Access-log records added to the count of a summary record, their client address being over its share of the day's budget.", 'summarised');
  count('gatehouse_access_log_records_duplicates_total', 'Access-log records skipped as re-deliveries of stored batches.', 'duplicates');
  count('gatehouse_access_log_records_expired_total', 'Access-log records not stored because their day had been deleted (retention or size).', 'expired');
  count('gatehouse_access_log_records_discarded_total', 'Access-log records not stored because the access log was full (ACCESS_LOG_MAX_SIZE or the disk reserve).', 'discarded');
  count('gatehouse_access_log_addresses_over_share_total', "Times a client address filled its share of a day's access-log budget (its further records that day are summarised).", 'addressesOverShare');
  count('gatehouse_access_log_exported_total', 'Access-log records the OTLP collector accepted.', 'exported');
  count('gatehouse_access_log_export_dropped_total', 'Access-log records the OTLP export gave up on (buffer full, refused, or unsent at stop).', 'exportDropped');
  mirrorGauge(registry, 'gatehouse_access_log_disk_bytes', 'Bytes the access log\'s day files take on disk.', () => totals().bytes);
  mirrorGauge(registry, 'gatehouse_access_log_days', 'Days of raw access-log records kept.', () => totals().days);
  registerDaysDeleted(registry, totals);
}

/** `gatehouse_access_log_days_deleted_total{reason}`, one series per reason from the start (0 until one is deleted). */
function registerDaysDeleted(registry: Registry, totals: () => WriterTotals): void {
  new Counter({
    name: 'gatehouse_access_log_days_deleted_total',
    help: 'Day files of raw access-log records deleted: by age (retention), or to stay within ACCESS_LOG_MAX_SIZE (max_size) or the disk reserve (disk_reserve).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, days] of Object.entries(totals().daysDeleted) as [DeletionReason, number][]) this.inc({ reason }, days);
    },
  });
}
