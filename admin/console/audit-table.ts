import { LOCAL_ACTOR_PREFIX } from '../actor.js';
import type { AuditAction, AuditRecord } from '../audit-log.js';
import { html, type Html } from '../../shared/pages/html.js';
import { policyLines } from './access-policy-text.js';
import { POOL_FIELD_TEXT, targetsText } from './pool-settings-text.js';
import { hostsText, SERVICE_FIELD_LABELS } from './service-field-labels.js';
import { emptyState, timeTag } from './fragments.js';
import { userSessionsHref } from './sessions-table.js';

/** How each audit action reads in the console. */
const ACTION_LABELS: Record<AuditAction, string> = {
  SERVICE_CREATED: 'Service created',
  SERVICE_UPDATED: 'Service updated',
  SERVICE_DELETED: 'Service deleted',
  SERVICE_ENABLED: 'Service enabled',
  SERVICE_DISABLED: 'Service disabled',
  USER_LOGIN: 'Signed in',
  USER_LOGOUT: 'Signed out',
  LOGIN_FAILED: 'Sign-in failed',
  ASSERTION_KEY_ROTATED: 'Assertion key rotated',
  TOKEN_CREATED: 'API token created',
  TOKEN_REVOKED: 'API token revoked',
  SESSION_REVOKED: 'Sessions ended',
  ACCESS_LOG_DAY_DELETED: 'Access-log day deleted',
};

type Details = Record<string, unknown>;
type ServiceSnapshot = { name?: unknown; path?: unknown; hosts?: unknown; targetUrl?: unknown; targets?: unknown; requireAuth?: unknown; access?: unknown };

/** What the table needs beyond the records to name things. */
export interface AuditNames {
  /** Services that still exist, by id (their names link to their pages). */
  services: Map<string, string>;
  /** Emails of acting users, by subject (from their latest sign-in). */
  emails: Map<string, string>;
  /** Names of acting API tokens, by actor id (`token:<id>`, design.md §4.8). */
  tokens: Map<string, string>;
}

/**
 * The audit log as a table (design.md §4.6): when, what, who, from where, which service, and the
 * details; for an update, each changed field before and after.
 */
export function auditTable(records: AuditRecord[], names: AuditNames, caption: string): Html {
  if (records.length === 0) {
    return emptyState('Nothing has happened yet. Sign-ins and every change to a service are recorded here.');
  }
  const parsed = records.map((record) => parseDetails(record.details));
  const fallbackNames = namesFromDetails(records, parsed);
  const row = (record: AuditRecord, i: number) => {
    const details = parsed[i]!;
    return html`<tr>
<td data-label="When">${timeTag(record.timestamp)}</td>
<th scope="row" data-label="Action"><span class="action action-${record.action.toLowerCase()}">${ACTION_LABELS[record.action] ?? record.action}</span></th>
<td data-label="Who">${who(record, details, names)}</td>
<td data-label="From">${record.ip_address ?? '—'}</td>
<td data-label="Service">${serviceCell(record, details, names.services, fallbackNames)}</td>
<td data-label="Details" class="wrap">${describe(record.action, details)}</td>
</tr>`;
  };
  return html`<div class="table-wrap"><table class="responsive audit-table">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Who</th><th scope="col">From</th><th scope="col">Service</th><th scope="col">Details</th></tr></thead>
<tbody>${records.map(row)}</tbody>
</table></div>`;
}

function parseDetails(text: string): Details {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Details) : {};
  } catch {
    return {};
  }
}

/**
 * The actor: a user by the email they signed in with and their subject, linked to their sessions;
 * an API token by its name and id; an operator on the admin host (`local:<os user>`, the
 * `gatehouse tokens` CLI) as such. Without a user, who the entry's details name (the identity
 * provider, the gateway), else "anonymous".
 */
function who(record: AuditRecord, details: Details, names: AuditNames): Html | string {
  if (!record.user_id) return html`<span class="muted">${actorWithoutUser(record, details)}</span>`;
  const token = names.tokens.get(record.user_id);
  if (token !== undefined) return html`API token “${token}”<br><code class="muted">${record.user_id}</code>`;
  if (record.user_id.startsWith(LOCAL_ACTOR_PREFIX)) return html`an operator on the admin host<br><code class="muted">${record.user_id}</code>`;
  const email = names.emails.get(record.user_id);
  const href = userSessionsHref(record.user_id);
  return email
    ? html`<a href="${href}" title="Sessions of ${email}">${email}</a><br><code class="muted">${record.user_id}</code>`
    : html`<a href="${href}" title="Sessions of this user"><code>${record.user_id}</code></a>`;
}

/** Who acted when no user did: the gateway (a key reaching ASSERTION_KEY_LIFETIME, an unreadable refresh token), the identity provider. */
function actorWithoutUser(record: AuditRecord, details: Details): string {
  if (record.action === 'ASSERTION_KEY_ROTATED' || record.action === 'ACCESS_LOG_DAY_DELETED') return 'the gateway';
  if (record.action === 'SESSION_REVOKED' && details.by === 'identity provider') return 'the identity provider';
  if (record.action === 'SESSION_REVOKED' && details.by === 'gateway') return 'the gateway';
  return 'anonymous';
}

/** The service's name as an entry's details recorded it when it happened, if they did. */
function nameAtTheTime(details: Details): string | undefined {
  const snapshot = (details.service ?? details) as ServiceSnapshot;
  return typeof snapshot.name === 'string' ? snapshot.name : undefined;
}

/**
 * Names of services from the entries on the page that recorded one, newest first: for entries
 * written before updates recorded the name (design.md §4.6), whose services may since be deleted.
 */
function namesFromDetails(records: AuditRecord[], details: Details[]): Map<string, string> {
  const names = new Map<string, string>();
  records.forEach((record, i) => {
    const name = nameAtTheTime(details[i]!);
    if (record.service_id && name !== undefined && !names.has(record.service_id)) names.set(record.service_id, name);
  });
  return names;
}

/**
 * The service as it was when the entry happened (design.md §4.6): the name its details recorded
 * (else today's, else one recorded nearby), linked to the service's page while it still exists.
 */
function serviceCell(record: AuditRecord, details: Details, current: Map<string, string>, fallback: Map<string, string>): Html | string {
  const id = record.service_id;
  if (!id) return '—';
  const name = nameAtTheTime(details) ?? current.get(id) ?? fallback.get(id) ?? id;
  if (current.has(id)) return html`<a href="/dashboard/services/${id}">${name}</a>`;
  return html`<span title="This service has since been deleted">${name}</span>`;
}

/** A readable account of the details JSON of each action. */
function describe(action: AuditAction, details: Details): Html | string {
  switch (action) {
    case 'SERVICE_UPDATED':
      return changesList(details.changes);
    case 'SERVICE_CREATED':
    case 'SERVICE_DELETED': {
      const service = (details.service ?? {}) as ServiceSnapshot;
      const policy = service.access ? `; ${policyLines(service.access).join('; ')}` : '';
      // Entries from before pools name the one target only.
      const targets = service.targets === undefined ? show(service.targetUrl) : targetsText(service.targets);
      const hosts = service.hosts === undefined ? '' : html` on <code>${hostsText(service.hosts)}</code>`;
      return html`<code>${show(service.path)}</code>${hosts} → <code>${targets}</code>${service.requireAuth === false ? ', open to anyone' : ', sign-in required'}${policy}`;
    }
    case 'SERVICE_ENABLED':
    case 'SERVICE_DISABLED':
      return html`<code>${show(details.path)}</code>`;
    case 'USER_LOGIN':
      return details.isAdmin === true ? 'as an administrator' : '';
    case 'SESSION_REVOKED':
      return sessionsEnded(details);
    case 'LOGIN_FAILED':
      return show(details.reason);
    case 'TOKEN_CREATED':
    case 'TOKEN_REVOKED':
      return tokenDescription(details.token);
    case 'ACCESS_LOG_DAY_DELETED':
      return accessLogDayDeleted(details);
    case 'ASSERTION_KEY_ROTATED':
      return html`<code>${show(details.previousKid)}</code> → <code>${show(details.kid)}</code>${details.reason === 'lifetime' ? ', reached ASSERTION_KEY_LIFETIME' : ''}`;
    default:
      return '';
  }
}

/** Why sessions ended, by `reason` (admin/sessions/session-revocation.ts), as "by … (…)". */
const REVOCATION_REASONS: Record<string, string> = {
  'admin-revoked': 'by an administrator',
  'signed-out-elsewhere': 'by the user, from another of their sessions',
  'backchannel-logout': 'by the identity provider (back-channel logout)',
  'grant-revoked': 'by the identity provider (it refused the refresh token: access revoked)',
  'provider-unreachable': 'by the identity provider (unreachable for longer than the grace period)',
  'refresh-token-unreadable': 'by the gateway (the refresh token is sealed with a key no longer configured)',
};

/** "2 sessions of user@example.com, by the identity provider (back-channel logout)", the user linked to their sessions. */
function sessionsEnded(details: Details): Html | string {
  const subject = typeof details.subject === 'string' ? details.subject : undefined;
  const email = typeof details.email === 'string' && details.email !== '' ? details.email : undefined;
  const count = typeof details.count === 'number' ? details.count : undefined;
  const sessions = count === undefined ? 'Sessions' : count === 1 ? '1 session' : `${count} sessions`;
  const whose = subject === undefined ? '' : html` of <a href="${userSessionsHref(subject)}" title="Sessions of ${email ?? subject}">${email ?? subject}</a>`;
  const reason = typeof details.reason === 'string' && Object.hasOwn(REVOCATION_REASONS, details.reason) ? REVOCATION_REASONS[details.reason] : undefined;
  const by = reason ?? (typeof details.by === 'string' ? `by the ${details.by}` : undefined);
  return html`${sessions}${whose}${by ? `, ${by}` : ''}`;
}

/** Which limit made the gateway delete a day of the access log (admin/access-log/writing/access-log-store.ts). */
const DELETION_LIMITS: Record<string, string> = { max_size: 'ACCESS_LOG_MAX_SIZE', disk_reserve: "the disk's free-space reserve" };

/** "2025-01-31, 1,234 records, to stay within ACCESS_LOG_MAX_SIZE". */
function accessLogDayDeleted(details: Details): string {
  const records = typeof details.records === 'number' && details.records >= 0 ? `, ${details.records.toLocaleString('en-US')} records` : '';
  const limit = typeof details.reason === 'string' && Object.hasOwn(DELETION_LIMITS, details.reason) ? `, to stay within ${DELETION_LIMITS[details.reason]}` : '';
  return `${show(details.day)}${records}${limit}`;
}

/** A token as its audit entry recorded it: name, scope and expiry (design.md §4.8). */
function tokenDescription(token: unknown): Html | string {
  if (typeof token !== 'object' || token === null) return '';
  const { name, scope, expiresAt } = token as { name?: unknown; scope?: unknown; expiresAt?: unknown };
  const expiry = typeof expiresAt === 'string' ? html`, expires ${timeTag(expiresAt)}` : ', never expires';
  return html`“${show(name)}”, ${show(scope)}${expiry}`;
}

/** The wording of each service field whose value {@link show} would not say well. */
const FIELD_TEXT: Readonly<Record<string, (value: unknown) => string>> = {
  access: (policy) => policyLines(policy).join('; '),
  hosts: hostsText,
  ...POOL_FIELD_TEXT,
};

/** `{ field: { before, after } }` as "Field: before → after" lines. */
function changesList(changes: unknown): Html | string {
  if (typeof changes !== 'object' || changes === null) return '';
  const items = Object.entries(changes as Record<string, { before?: unknown; after?: unknown }>).map(([field, change]) => {
    const text = Object.hasOwn(FIELD_TEXT, field) ? FIELD_TEXT[field]! : show;
    return html`<li><span class="field">${SERVICE_FIELD_LABELS[field] ?? field}</span>:
<del><span class="visually-hidden">before: </span>${text(change.before)}</del> → <ins><span class="visually-hidden">after: </span>${text(change.after)}</ins></li>`;
  });
  return html`<ul class="changes">${items}</ul>`;
}

/** A value from the details JSON as text: booleans as yes/no, empty text marked. */
function show(value: unknown): string {
  if (value === true) return 'yes';
  if (value === false) return 'no';
  if (value === '') return '(empty)';
  if (value === undefined || value === null) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
