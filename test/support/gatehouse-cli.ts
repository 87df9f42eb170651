/**
 * Runs the `gatehouse` CLI (admin/cli/gatehouse.ts, package.json `bin`) as a real process from its
 * compiled file, as an operator would run `npx gatehouse`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const CLI = new URL('../../admin/cli/gatehouse.js', import.meta.url).pathname;

/** How a run ended: its exit code and everything it wrote. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI with `args`, this process's environment with `env` on top (an `undefined` value
 * removes the variable), and `stdin` (default empty) on its standard input; resolves once it exits.
 */
export async function runGatehouseCli(args: string[], env: Record<string, string | undefined> = {}, stdin = ''): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  const child = spawn(process.execPath, [CLI, ...args], { env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  child.stdin.end(stdin);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
