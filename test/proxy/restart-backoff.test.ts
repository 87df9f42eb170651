/**
 * The cluster primary's restart delays (README, "Workers that die"): 100 ms doubling to 10 s, back to 100 ms
 * after a minute without a restart. The clock is a plain number the test moves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartBackoff } from '../../proxy/process/restart-backoff.js';

test('delays double from 100 ms and stop growing at 10 s', () => {
  let now = 0;
  const backoff = new RestartBackoff({ now: () => now });
  const delays: number[] = [];
  for (let i = 0; i < 10; i++) {
    const delay = backoff.next();
    delays.push(delay);
    now += delay + 1_000; // the replacement ran a second, then died
  }
  assert.deepEqual(delays, [100, 200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000, 10_000]);
});

test('a minute of stable running after the last restart starts again from 100 ms', () => {
  let now = 0;
  const backoff = new RestartBackoff({ now: () => now });
  for (let i = 0; i < 5; i++) now += backoff.next();
  now += 59_999;
  assert.equal(backoff.next(), 3_200, 'not yet a minute');
  now += 3_200 + 60_000;
  assert.equal(backoff.next(), 100);
  assert.equal(backoff.next(), 200);
});
