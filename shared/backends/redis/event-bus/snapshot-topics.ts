import { isAssertionKeySet, type AssertionKeySet } from '../../../identity/assertion-key-set.js';
import type { Service } from '../../../types.js';
import { isAcmeChallengeSet, isCertificateNotice, type AcmeChallengeSet, type CertificateNotice } from '../../../tls/acme-messages.js';
import {
  ACME_CHALLENGES_CHANNEL,
  ACME_CHALLENGES_KEY,
  ASSERTION_KEYS_CHANNEL,
  ASSERTION_KEYS_EPOCH_KEY,
  ASSERTION_KEYS_KEY,
  ASSERTION_KEYS_VERSION_KEY,
  CERTIFICATES_CHANNEL,
  CERTIFICATES_KEY,
  REGISTRY_CHANNEL,
  REGISTRY_EPOCH_KEY,
  REGISTRY_KEY,
  REGISTRY_VERSION_KEY,
} from '../redis-keys.js';
import type { SnapshotTopic } from './snapshot.js';

/** The whole service registry (design.md §2). */
export const REGISTRY_TOPIC: SnapshotTopic<readonly Service[]> = {
  name: 'registry',
  key: REGISTRY_KEY,
  versionKey: REGISTRY_VERSION_KEY,
  epochKey: REGISTRY_EPOCH_KEY,
  channel: REGISTRY_CHANNEL,
  field: 'services',
  isPayload: (value): value is readonly Service[] => Array.isArray(value),
};

/** The identity assertion's keys (design.md §4.7). */
export const ASSERTION_KEYS_TOPIC: SnapshotTopic<AssertionKeySet> = {
  name: 'assertion keys',
  key: ASSERTION_KEYS_KEY,
  versionKey: ASSERTION_KEYS_VERSION_KEY,
  epochKey: ASSERTION_KEYS_EPOCH_KEY,
  channel: ASSERTION_KEYS_CHANNEL,
  field: 'keySet',
  isPayload: isAssertionKeySet,
};

/**
 * The ACME challenges under way (design.md §4.15; redis-keys.ts `ACME_CHALLENGES_KEY`). Key authorizations
 * and TLS-ALPN-01 challenge certificates only (RFC 8555 §8.1: public by design).
 */
export const ACME_CHALLENGES_TOPIC: SnapshotTopic<AcmeChallengeSet> = snapshotTopicAt('acme challenges', ACME_CHALLENGES_KEY, ACME_CHALLENGES_CHANNEL, 'challenges', isAcmeChallengeSet);

/**
 * The certificates the admin process holds (design.md §4.15; redis-keys.ts `CERTIFICATES_KEY`). Hosts, fingerprints and
 * the fetch token; never a private key (proxies fetch the pairs from the admin process).
 */
export const CERTIFICATES_TOPIC: SnapshotTopic<CertificateNotice> = snapshotTopicAt('certificates', CERTIFICATES_KEY, CERTIFICATES_CHANNEL, 'notice', isCertificateNotice);

/** A topic whose version and epoch keys sit beside its snapshot key, in its hash slot. */
function snapshotTopicAt<T>(name: string, key: string, channel: string, field: string, isPayload: (value: unknown) => value is T): SnapshotTopic<T> {
  return { name, key, versionKey: `${key}:version`, epochKey: `${key}:epoch`, channel, field, isPayload };
}
