import type { AuditRecord } from '../audit-log.js';
import { html } from '../../shared/pages/html.js';
import { auditTable, type AuditNames } from './audit-table.js';
import { consolePage, type ConsoleView } from './console-layout.js';
import { pager } from './fragments.js';

/** Rows per page of the console's audit log. */
export const CONSOLE_AUDIT_PAGE_SIZE = 50;

/**
 * `GET /dashboard/audit?offset=`: the audit log, newest first and paged (design.md §4.6): every action
 * with who, when and from where, and each update's changed fields before and after.
 */
export function auditPage(
  view: ConsoleView,
  data: { logs: AuditRecord[]; total: number; limit: number; offset: number; url: URL; names: AuditNames },
): string {
  const body = html`<h1>Audit log</h1>
<p class="muted">Every sign-in, every change to a service and every API token made or revoked, newest first. Times are in your time zone; hover for UTC.</p>
<div${data.offset === 0 ? html` data-live="audit"` : ''}>
${auditTable(data.logs, data.names, 'Audit log, newest first')}
${data.total > 0 ? pager({ url: data.url, total: data.total, offset: data.offset, shown: data.logs.length, limit: data.limit, label: 'Audit log pages' }) : ''}
</div>`;
  return consolePage(view, { title: 'Audit log', section: 'audit', body, live: true });
}
