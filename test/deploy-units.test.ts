/**
 * The example systemd units under deploy/ (README "Production topology"): `systemd-analyze verify`
 * has nothing to say about them where systemd-analyze exists (and complains of a broken one, so
 * the check can fail),
 * and they start the same entry points as `npm run start:admin` and `start:proxy`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const UNITS = { 'gatehouse-admin.service': 'start:admin', 'gatehouse-proxy.service': 'start:proxy' } as const;
const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** `systemd-analyze verify` of `paths`: its exit status and what it printed. */
function verify(paths: string[]): { status: number | null; output: string } {
  const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test('the units start what the npm scripts start', () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const [unit, script] of Object.entries(UNITS)) {
    const entry = /node (\S+)$/.exec(scripts[script]!)?.[1];
    const execStart = /^ExecStart=\S+ (\S+)$/m.exec(readFileSync(join(ROOT, 'deploy', unit), 'utf8'))?.[1];
    assert.ok(entry && execStart?.endsWith(`/${entry}`), `${unit}: ${execStart} runs ${entry}`);
  }
});

test('systemd-analyze verify accepts them, and refuses a broken unit', { skip: hasAnalyze ? false : 'systemd-analyze is not installed' }, () => {
  const result = verify(Object.keys(UNITS).map((unit) => join(ROOT, 'deploy', unit)));
  assert.equal(result.status, 0, result.output);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-units-'));
  try {
    const broken = join(dir, 'gatehouse-broken.service');
    writeFileSync(broken, readFileSync(join(ROOT, 'deploy', 'gatehouse-proxy.service'), 'utf8').replace('Type=simple', 'Type=simplest'));
    assert.match(verify([broken]).output, /Failed to parse service type/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
