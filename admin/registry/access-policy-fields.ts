import * as v from 'valibot';
import type { AccessPolicy } from '../../shared/types.js';
import { atMostChars } from '../http/char-length.js';
import { validationError } from '../http/json-body-validation.js';
import { got, isObject } from './service-fields.js';

/**
 * The rules of a service's access policy, `access` (design.md §4.7, limits in §5): who may use the
 * service once signed in. A valibot schema for the bodies' schemas (service-validation.ts), and the
 * check across fields that a policy needs sign-in.
 */

/** Most entries in one list of an access policy (design.md §5). */
export const MAX_POLICY_ENTRIES = 1000;
/** Longest entry of an access policy's lists, after trimming, in characters (design.md §5). */
export const MAX_POLICY_ENTRY_LENGTH = 320;

/** An email address as a policy lists it: one `@` between a local part and a domain, no whitespace. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** A domain as a policy lists it: dot-separated labels, none empty, no `@` or whitespace. */
const DOMAIN = /^[^\s@.]+(\.[^\s@.]+)*$/;

/** One entry of an access policy's list: a string, trimmed, not empty, not too long. */
const policyEntry = v.pipe(
  v.string('must contain only strings'),
  v.description(`1 to ${MAX_POLICY_ENTRY_LENGTH} characters after trimming`),
  v.trim(),
  v.check((entry) => entry.length > 0, 'must not contain an empty entry'),
  ...atMostChars(MAX_POLICY_ENTRY_LENGTH, `entries must be at most ${MAX_POLICY_ENTRY_LENGTH} characters`),
);

/** Emails are matched case-insensitively (design.md §4.7), so they are kept lowercased. */
const emailEntry = v.pipe(
  policyEntry,
  v.description('An email address: one @, no whitespace; kept lowercased'),
  v.check((entry) => EMAIL.test(entry), (issue) => `must be an email address ${got(issue)}`),
  v.toLowerCase(),
);

/** A domain matches the part after an email's last `@`, case-insensitively (design.md §4.7). */
const domainEntry = v.pipe(
  policyEntry,
  v.description('A domain such as example.com, without @; kept lowercased'),
  v.check((entry) => !entry.includes('@'), (issue) => `must be a domain without @ ${got(issue)}`),
  v.check((entry) => DOMAIN.test(entry), (issue) => `must be a domain such as example.com ${got(issue)}`),
  v.toLowerCase(),
);

/** A list of a policy: an array of `entry`, each kept once, in the order first given. */
const policyList = <T extends v.GenericSchema<unknown, string>>(entry: T) =>
  v.optional(
    v.pipe(
      v.array(entry, 'must be a list of strings'),
      v.maxLength(MAX_POLICY_ENTRIES, `must have at most ${MAX_POLICY_ENTRIES} entries`),
      v.description('Each entry kept once, in the order first given'),
      v.transform((list): string[] => [...new Set(list)]),
    ),
    [],
  );

/**
 * `access` (design.md §4.7): null, or an object of up to four lists (unknown keys refused);
 * groups and subjects kept as written (trimmed), emails and domains lowercased. A policy whose
 * lists are all empty is no policy: null.
 */
export const accessSchema = v.pipe(
  v.nullable(
    v.pipe(
      v.custom<object>(isObject, 'must be an object or null'),
      v.strictObject({ groups: policyList(policyEntry), emails: policyList(emailEntry), emailDomains: policyList(domainEntry), subjects: policyList(policyEntry) }),
    ),
  ),
  v.description(
    'Who may use the service once signed in: a caller matching any entry (a group, a verified email or its domain, ' +
      'a subject); null, or all lists empty: any signed-in caller. Needs requireAuth: true',
  ),
  v.transform((policy): AccessPolicy | null => (policy && Object.values(policy).some((list) => list.length > 0) ? policy : null)),
);

/**
 * A service's access policy applies to signed-in callers, so it needs `requireAuth: true`
 * (design.md §4.7). Checked on the service a create or update would leave, so a PUT that turns
 * `requireAuth` off while a policy stays is refused too.
 * @throws {GatewayError} BAD_REQUEST with `fields.access` `needs requireAuth`.
 */
export function assertPolicyNeedsSignIn(service: { requireAuth: boolean; access?: AccessPolicy | null }): void {
  if (service.access && !service.requireAuth) throw validationError('Invalid service', { access: 'needs requireAuth' }, []);
}
