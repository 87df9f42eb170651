import { isAssertionKeySet, type AssertionKeySet } from '../../../identity/assertion-key-set.js';
import type { Service } from '../../../types.js';
import {
  ASSERTION_KEYS_CHANNEL,
  ASSERTION_KEYS_EPOCH_KEY,
  ASSERTION_KEYS_KEY,
  ASSERTION_KEYS_VERSION_KEY,
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
