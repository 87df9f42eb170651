import type { Registry } from 'prom-client';
import { mirrorCount, mirrorGauge } from '../../shared/mirrored-metrics.js';
import type { WriterTotals } from './writing/writer-protocol.js';

/**
 * The admin side of the access-log pipeline in `/metrics` (ADMIN_PORT; the embedded gateway's
 * too), read from the writer thread's counters as of its last batch:
 * - `gatehouse_access_log_records_stored_total`, `…_duplicates_total` (re-deliveries skipped),
 *   `…_expired_total` (arrived after their day was deleted);
 * - `gatehouse_access_log_records_discarded_total`: not stored because the access log was full
 *   (ACCESS_LOG_MAX_SIZE or the disk's reserve reached with no older day left to delete);
 * - `gatehouse_access_log_disk_bytes`, `gatehouse_access_log_days`: the day files kept;
 * - `gatehouse_access_log_exported_total`, `…_export_dropped_total`: the OTLP export (README
 *   "Access log export").
 */
export function registerAccessLogMetrics(registry: Registry, totals: () => WriterTotals): void {
  const count = (name: string, help: string, key: keyof WriterTotals) => mirrorCount(registry, name, help, () => totals()[key]);
  count('gatehouse_access_log_records_stored_total', 'Access-log records stored in the day files.', 'stored');
  count('gatehouse_access_log_records_duplicates_total', 'Access-log records skipped as re-deliveries of stored batches.', 'duplicates');
  count('gatehouse_access_log_records_expired_total', 'Access-log records not stored because their day had been deleted (retention or size).', 'expired');
  count('gatehouse_access_log_records_discarded_total', 'Access-log records not stored because the access log was full (ACCESS_LOG_MAX_SIZE or the disk reserve).', 'discarded');
  count('gatehouse_access_log_exported_total', 'Access-log records the OTLP collector accepted.', 'exported');
  count('gatehouse_access_log_export_dropped_total', 'Access-log records the OTLP export gave up on (buffer full, refused, or unsent at stop).', 'exportDropped');
  mirrorGauge(registry, 'gatehouse_access_log_disk_bytes', 'Bytes the access log\'s day files take on disk.', () => totals().bytes);
  mirrorGauge(registry, 'gatehouse_access_log_days', 'Days of raw access-log records kept.', () => totals().days);
}
