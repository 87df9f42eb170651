/**
 * A program run on one host of the data centre (`ip netns exec <namespace> <command> …`), with its
 * output kept, readiness read from its own log lines, and a stop that waits for its exit. Killed
 * with the test process whatever happens to the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { FleetHost } from './network.js';

export interface HostProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once its output contains `text`. @throws with its output when it exits first or `timeoutMs` passes. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Sends `signal` (SIGTERM by default) and resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `command` with `args` on `host`, `env` on top of this process's environment. */
export function startOnHost(host: FleetHost, command: string, args: readonly string[], env: Record<string, string> = {}): HostProcess {
  const [program, ...rest] = [...host.prefix, command, ...args];
  const child = spawn(program!, rest, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString('utf8'));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  child.on('error', (error) => (output += `\n${String(error)}`));
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = once(child, 'exit').then(() => void process.off('exit', killOnExit));
  return {
    child,
    output: () => output,
    async waitFor(text, timeoutMs = 30_000) {
      const started = Date.now();
      while (!output.includes(text)) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${command} on ${host.name} exited before "${text}":\n${output}`);
        if (Date.now() - started > timeoutMs) throw new Error(`${command} on ${host.name}: no "${text}" within ${timeoutMs} ms:\n${output}`);
        await Promise.race([once(child.stdout!, 'data'), once(child.stderr!, 'data'), exited, new Promise((resolve) => setTimeout(resolve, 200))]);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
