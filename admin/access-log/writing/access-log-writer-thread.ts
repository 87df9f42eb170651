/**
 * The access-log writer's thread (see access-log-writer.ts): stores each batch it is sent into the
 * day files and the rollups ({@link AccessLogStore}), then offers it to the OTLP export when one is
 * configured ({@link OtlpLogExporter}: its reply, which lets the stream acknowledge the batch, comes
 * once both hold it), and does the access log's upkeep (retention.ts). Its log lines and counters go to
 * the main thread as notices. Not imported by the main thread.
 */
import { workerData } from 'node:worker_threads';
import type { AccessLogEntry } from '../../../shared/types.js';
import { openDatabase } from '../../database.js';
import { AuditLog, GATEWAY_ACTOR } from '../../audit-log.js';
import { AccessLogStore } from './access-log-store.js';
import type { BudgetDeletion } from './store-options.js';
import { addressShareBytes } from './address-shares.js';
import { moveLegacyRecords } from '../legacy-table.js';
import { OtlpLogExporter } from '../otlp/otlp-export.js';
import { startMaintenance } from './retention.js';
import { serviceNames } from '../service-names.js';
import { serveCalls } from '../worker-calls.js';
import type { WriterNotice, WriterOptions, WriterRequest, WriterTotals } from './writer-protocol.js';

/**
 * This thread's page cache of the gateway database, in KiB (`PRAGMA cache_size` takes a negative
 * count as KiB): SQLite's own default. better-sqlite3 builds SQLite with 16 MB, which a writer
 * fills with pages it never reads again (bench/README.md).
 */
const WRITER_CACHE_KIB = 2_000;

const options = workerData as WriterOptions;

// Calls are served from the next turn of the loop on, once everything below exists; notices can be
// sent from the start (the store's first retention pass tells what it deleted).
const notify = serveCalls<WriterRequest, WriterTotals, WriterNotice>(
  async (request) => {
    if ('close' in request) {
      await exporter?.close();
      return totals();
    }
    const batches = request.json.map((text) => JSON.parse(text) as AccessLogEntry[]);
    store.storeBatches(batches);
    // Only once stored: a batch whose store failed comes again, and is offered then.
    for (const records of batches) exporter?.offer(records);
    return totals();
  },
  () => {
    stopped = true;
    clearInterval(reporting);
    stopMaintenance();
    store.close();
    db.close();
  },
);

const db = openDatabase(options.databasePath);
db.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
const audit = new AuditLog(db);
const store = new AccessLogStore(db, {
  dir: options.dir,
  retentionDays: options.retentionDays,
  budget: options.budget,
  addressShareBytes: addressShareBytes(options.budget, options.retentionDays),
  notify,
  onBudgetDeletion: auditDeletion,
});
const exporter = options.export && new OtlpLogExporter({
  url: new URL(options.export.url),
  headers: options.export.headers,
  maxBufferedBytes: options.export.bufferBytes,
  serviceName: serviceNames(db),
  log: (level, fields, message) => notify({ level, message, fields }),
});
const totals = (): WriterTotals => ({ ...store.totals, exported: exporter?.exported ?? 0, exportDropped: exporter?.dropped ?? 0 });

let stopped = false;
const stopMaintenance = startMaintenance(db, store, (fields, message) => notify({ level: 'info', message, fields }));
void moveLegacyRecords(db, store, () => stopped).then(
  (moved) => moved > 0 && notify({ level: 'info', message: 'access log: moved the records of the old access_logs table into day files', fields: { moved } }),
  (err: Error) => notify({ level: 'warn', message: 'access log: moving the old access_logs table failed; will retry at the next start', fields: { err: err.message } }),
);

/**
 * Records a day deleted to keep the budget in the audit log, as the gateway: evidence that cannot
 * be deleted with it (the audit log is in the gateway's database, not in the day files). A failure
 * (the database's disk full) is logged, and does not stop the store.
 */
function auditDeletion(deletion: BudgetDeletion): void {
  try {
    audit.record({ ...GATEWAY_ACTOR, action: 'ACCESS_LOG_DAY_DELETED', serviceId: null, details: { ...deletion } });
  } catch (err) {
    notify({ level: 'error', message: 'access log: the deletion of a day could not be written to the audit log', fields: { ...deletion, err: (err as Error).message } });
  }
}

/** How often the counters are reported without being asked, in ms. */
const REPORT_MS = 2_000;
const reporting = setInterval(() => notify({ totals: totals() }), REPORT_MS).unref();
