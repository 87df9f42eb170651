/** What loadConfig refuses, for the configuration tests. Not a test file. */
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../shared/config/config.js';

/** The problems loadConfig reports for `env`, one line each. Fails the test when it takes `env`. */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}
