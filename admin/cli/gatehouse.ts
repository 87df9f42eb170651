#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { errorCode } from '../../shared/error-code.js';
import type { RegistryPlan } from '../registry/registry-document.js';
import { adminApiFromEnv, callAdminApi, CliError, type AdminApi } from './admin-api.js';
import { databasePathFromEnv, listLocalTokens, revokeLocalToken } from './local-tokens.js';
import { planTable } from './plan-table.js';

/**
 * `npx gatehouse` (package.json `bin`):
 * - `services export|plan|apply <file>`: a repository of service definitions kept as a registry
 *   document and applied from CI (design.md §4.9), through the admin API with an admin API token
 *   (GATEHOUSE_ADMIN_URL, GATEHOUSE_TOKEN);
 * - `tokens list|revoke <id>`: the admin API tokens, straight in the database at DATABASE_PATH on
 *   the admin host, without a session or the admin process (break-glass: local-tokens.ts).
 * Exit status 0 when done, 1 when the gateway refuses or cannot be reached, a file or the
 * database cannot be read or written, or a token is not found; 2 for wrong usage; each failure is
 * said on standard error.
 */

const USAGE = `Usage: gatehouse services <command> <file>
       gatehouse tokens list
       gatehouse tokens revoke <id>

Services, through the admin API:
  export <file>   Write the gateway's registry as a document to <file> (- for standard output)
  plan <file>     Show what applying the document <file> would change; changes nothing
  apply <file>    Apply the document <file> in one transaction and show what changed
                  (<file> may be - for standard input)

Tokens, on the admin host, in the gateway's database (no session; the admin process may be down):
  list            List the admin API tokens not revoked
  revoke <id>     Revoke a token at once (audited as local:<your user name>)

Environment:
  GATEHOUSE_ADMIN_URL  The admin API's origin: ADMIN_URL, or the admin port (http://127.0.0.1:8081)
  GATEHOUSE_TOKEN      An admin API token (ght_…): read scope for export, write for plan and apply
  DATABASE_PATH        The admin process's database, for tokens (./data/gateway.db)

Exit status: 0 done, 1 failed (the reason on standard error), 2 wrong usage.
`;

/** Wrong arguments: the message and the usage, exit status 2. */
class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const [group, ...rest] = positionals;
  if (group === 'services') return services(rest);
  if (group === 'tokens') return tokens(rest);
  throw new UsageError(group === undefined ? 'no command given' : `unknown command: ${group}`);
}

/** `services export|plan|apply <file>`. */
async function services([command, file, ...extra]: string[]): Promise<void> {
  if (command !== 'export' && command !== 'plan' && command !== 'apply') {
    throw new UsageError(command === undefined ? 'services needs export, plan or apply' : `unknown services command: ${command}`);
  }
  if (file === undefined) throw new UsageError(`services ${command} needs a file (- for standard ${command === 'export' ? 'output' : 'input'})`);
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const api = adminApiFromEnv(process.env);
  if (command === 'export') await exportDocument(api, file);
  else await applyDocument(api, file, command === 'plan');
}

/** `tokens list` and `tokens revoke <id>`, in the database at DATABASE_PATH (local-tokens.ts). */
function tokens([command, id, ...extra]: string[]): void {
  if (command !== 'list' && command !== 'revoke') {
    throw new UsageError(command === undefined ? 'tokens needs list or revoke' : `unknown tokens command: ${command}`);
  }
  const unexpected = command === 'list' ? [id, ...extra].filter((arg) => arg !== undefined) : extra;
  if (unexpected.length > 0) throw new UsageError(`unexpected arguments: ${unexpected.join(' ')}`);
  if (command === 'revoke' && id === undefined) throw new UsageError('tokens revoke needs the id of a token (gatehouse tokens list shows them)');
  const path = databasePathFromEnv(process.env);
  process.stdout.write(command === 'list' ? listLocalTokens(path) : revokeLocalToken(path, id!));
}

/** `services export <file>`: GET /api/services/export, written as indented JSON. */
async function exportDocument(api: AdminApi, file: string): Promise<void> {
  const document = (await callAdminApi(api, 'GET', '/api/services/export')) as { services: unknown[] };
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (file === '-') {
    process.stdout.write(text);
    return;
  }
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${(error as Error).message}`);
  }
  const count = document.services.length;
  process.stderr.write(`Exported ${count} ${count === 1 ? 'service' : 'services'} from ${api.baseUrl.origin} to ${file}.\n`);
}

/**
 * `services plan|apply <file>`: POST /api/services/apply (with dryRun=true for a plan), the
 * document sent without its indentation, the answer printed as a table.
 */
async function applyDocument(api: AdminApi, file: string, dryRun: boolean): Promise<void> {
  const document = JSON.stringify(readDocument(file));
  const plan = (await callAdminApi(api, 'POST', `/api/services/apply?dryRun=${dryRun}`, document)) as RegistryPlan;
  process.stdout.write(planTable(plan, !dryRun));
}

/**
 * The document in `file`, parsed (the gateway checks the rest and names each problem).
 * @throws {CliError} when the file cannot be read or is not JSON.
 */
function readDocument(file: string): unknown {
  const name = file === '-' ? 'standard input' : file;
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${name}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${name} is not JSON: ${(error as Error).message}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || errorCode(error) === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`gatehouse: ${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`gatehouse: ${error instanceof CliError ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
