import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPendingState, MAX_PENDING_LOGINS, pendingStates, withoutState, withState } from '../../admin/oidc/pending-logins.js';

test('a new login goes in front; past the maximum the oldest is dropped; a repeated state is not listed twice', () => {
  let states: string[] = [];
  for (let i = 1; i <= MAX_PENDING_LOGINS + 2; i++) states = withState(states, `s${i}`);
  assert.deepEqual(states, ['s7', 's6', 's5', 's4', 's3']);
  assert.deepEqual(withState(states, 's5'), ['s5', 's7', 's6', 's4', 's3']);
});

test('the cookie value is read leniently: malformed entries are ignored', () => {
  assert.deepEqual(pendingStates(undefined), []);
  assert.deepEqual(pendingStates('abc_DEF-1.<script>..x y.ok'), ['abc_DEF-1', 'ok']);
});

test('a state matches only when listed; a finished one leaves the others', () => {
  const states = ['first', 'second'];
  assert.equal(isPendingState(states, 'second'), true);
  assert.equal(isPendingState(states, 'third'), false);
  assert.equal(isPendingState([], 'first'), false);
  assert.deepEqual(withoutState(states, 'first'), ['second']);
});
