import type { Database, Statement } from 'better-sqlite3';

/** Audit actions (design.md §5), in that order. */
export const AUDIT_ACTIONS = [
  'SERVICE_CREATED',
  'SERVICE_UPDATED',
  'SERVICE_DELETED',
  'SERVICE_ENABLED',
  'SERVICE_DISABLED',
  'USER_LOGIN',
  'USER_LOGOUT',
  'LOGIN_FAILED',
  'ASSERTION_KEY_ROTATED',
  'TOKEN_CREATED',
  'TOKEN_REVOKED',
  'SESSION_REVOKED',
  'ACCESS_LOG_DAY_DELETED',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did something, from where. */
export interface Actor {
  /** A session's subject, `token:<id>` for an admin API token (design.md §4.8), or null (the gateway itself, an anonymous sign-in failure). */
  userId: string | null;
  ipAddress: string | null;
}

/** The gateway itself, acting on its own: no user, no client address (e.g. ACCESS_LOG_DAY_DELETED). */
export const GATEWAY_ACTOR: Actor = { userId: null, ipAddress: null };

/** What to record; `details` is stored as JSON text. */
export interface AuditEntry extends Actor {
  action: AuditAction;
  serviceId: string | null;
  details: Record<string, unknown>;
}

/** An audit record as the API shows it (interface.md §2.3). */
export interface AuditRecord {
  id: number;
  action: AuditAction;
  user_id: string | null;
  service_id: string | null;
  ip_address: string | null;
  details: string;
  timestamp: string;
}

/** A recent-activity entry of the statistics object (interface.md §2.3, §2.5). */
export type RecentActivity = Pick<AuditRecord, 'id' | 'action' | 'user_id' | 'timestamp'>;

interface Row extends Omit<AuditRecord, 'timestamp'> {
  timestamp: number;
}

/**
 * The audit trail in SQLite (`audit_logs`). `record` is synchronous so callers can make it part of
 * the same transaction as the change it describes.
 */
export class AuditLog {
  readonly #insert: Statement<[string, string | null, string | null, string | null, string, number]>;
  readonly #page: Statement<[number, number], Row>;
  readonly #count: Statement<[], { total: number }>;
  readonly #loginEmail: Statement<[string], { email: unknown }>;

  constructor(db: Database) {
    this.#insert = db.prepare(
      'INSERT INTO audit_logs (action, user_id, service_id, ip_address, details, timestamp) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.#page = db.prepare('SELECT * FROM audit_logs ORDER BY id DESC LIMIT ? OFFSET ?');
    this.#count = db.prepare('SELECT count(*) AS total FROM audit_logs');
    this.#loginEmail = db.prepare(
      `SELECT json_extract(details, '$.email') AS email FROM audit_logs
       WHERE action = 'USER_LOGIN' AND user_id = ? ORDER BY id DESC LIMIT 1`,
    );
  }

  /** Appends one entry, timestamped now. */
  record(entry: AuditEntry): void {
    this.#insert.run(entry.action, entry.userId, entry.serviceId, entry.ipAddress, JSON.stringify(entry.details), Date.now());
  }

  /** A page of records, newest first, and the count of all records. */
  list(limit: number, offset: number): { logs: AuditRecord[]; total: number } {
    const logs = this.#page.all(limit, offset).map((row) => ({ ...row, timestamp: new Date(row.timestamp).toISOString() }));
    return { logs, total: this.#count.get()!.total };
  }

  /** For each subject, the email of its latest sign-in, when it has one (to name who acted). */
  loginEmails(subjects: Iterable<string | null>): Map<string, string> {
    const emails = new Map<string, string>();
    for (const subject of new Set(subjects)) {
      const email = subject === null ? undefined : this.#loginEmail.get(subject)?.email;
      if (subject !== null && typeof email === 'string') emails.set(subject, email);
    }
    return emails;
  }

  /** The newest `count` records as recent-activity entries. */
  recent(count: number): RecentActivity[] {
    return this.list(count, 0).logs.map(({ id, action, user_id, timestamp }) => ({ id, action, user_id, timestamp }));
  }
}
