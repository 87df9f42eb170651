import assert from 'node:assert/strict';
import { GatewayError } from '../../shared/errors.js';

/** The `fields` of the 400 {@link GatewayError} that `run` throws; fails the test when it throws none. */
export function refusalFields(run: () => unknown): Record<string, string> | undefined {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    return error.fields;
  }
  assert.fail('expected a 400');
}
