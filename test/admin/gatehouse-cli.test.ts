/**
 * design.md §4.9's CLI, `gatehouse services export|plan|apply <file>` (package.json `bin`), run as
 * a real process from its compiled file against a running gateway with real API tokens: what it
 * writes and prints, and its exit status and message for every way it can fail.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { freePort } from '../support/free-port.js';
import { runGatehouseCli, type CliRun as Run } from '../support/gatehouse-cli.js';
import { bearer, createToken, type CreatedToken } from './api-token-checks.js';

let dir: string;
let write: CreatedToken;
let read: CreatedToken;

const session = useAdminSession({}, async (session) => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  write = await createToken(session.gw.adminUrl, session.admin, { name: 'CLI write', scope: 'write' });
  read = await createToken(session.gw.adminUrl, session.admin, { name: 'CLI read', scope: 'read' });
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI with `args`, the gateway's admin port and `token` in its environment (unless `env` says otherwise), `stdin` on its standard input. */
function gatehouse(args: string[], options: { token?: string; env?: Record<string, string | undefined>; stdin?: string } = {}): Promise<Run> {
  return runGatehouseCli(args, { GATEHOUSE_ADMIN_URL: session.gw.adminUrl, GATEHOUSE_TOKEN: options.token ?? write.secret, ...options.env }, options.stdin);
}

const api = () => apiClient(session.gw.adminUrl);
const exported = async () => (await api()('GET', '/api/services/export', { authorization: bearer(read.secret) })).json;

describe('gatehouse services export, plan, apply', () => {
  it('exports the registry to a file, plans the file\'s changes as a table, applies them, and then has nothing to do', async () => {
    for (const [name, path] of [['A', '/cli-a'], ['B', '/cli-b']]) {
      const created = await api()('POST', '/api/services', { authorization: bearer(write.secret), json: { name, path, targetUrl: 'http://127.0.0.1:9' } });
      assert.equal(created.status, 201, created.text);
    }
    const file = join(dir, 'services.json');
    const exportRun = await gatehouse(['services', 'export', file], { token: read.secret });
    assert.deepEqual(exportRun, { code: 0, stdout: '', stderr: `Exported 2 services from ${session.gw.adminUrl} to ${file}.\n` });
    const written = readFileSync(file, 'utf8');
    assert.equal(written, `${JSON.stringify(await exported(), null, 2)}\n`, 'indented, for a repository');

    const document = JSON.parse(written);
    document.services = [
      { name: 'C', path: '/cli-c', targetUrl: 'http://127.0.0.1:11' },
      { ...document.services[0], targetUrl: 'http://127.0.0.1:10', targets: [{ url: 'http://127.0.0.1:10', weight: 1 }], enabled: false },
    ];
    writeFileSync(file, JSON.stringify(document));
    const before = await exported();
    const table = [
      'ACTION  PATH    NAME  CHANGES',
      'create  /cli-c  C',
      'update  /cli-a  A     targetUrl: "http://127.0.0.1:9" → "http://127.0.0.1:10"',
      '                      targets: [{"url":"http://127.0.0.1:9","weight":1}] → [{"url":"http://127.0.0.1:10","weight":1}]',
      '                      enabled: true → false',
      'delete  /cli-b  B',
      '',
    ].join('\n');
    const plan = await gatehouse(['services', 'plan', file]);
    assert.deepEqual(plan, { code: 0, stdout: `${table}\n1 to create, 1 to update, 1 to delete, 0 unchanged.\n`, stderr: '' });
    assert.deepEqual(await exported(), before, 'a plan changes nothing');

    const apply = await gatehouse(['services', 'apply', file]);
    assert.deepEqual(apply, { code: 0, stdout: `${table}\n1 created, 1 updated, 1 deleted, 0 unchanged.\n`, stderr: '' });
    assert.deepEqual((await exported()).services.map((s: { path: string; enabled: boolean }) => [s.path, s.enabled]), [['/cli-a', false], ['/cli-c', true]]);

    assert.deepEqual(await gatehouse(['services', 'plan', file]), { code: 0, stdout: 'No changes: 2 services as declared.\n', stderr: '' });
    const toStdout = await gatehouse(['services', 'export', '-'], { token: read.secret });
    assert.deepEqual(toStdout, { code: 0, stdout: `${JSON.stringify(await exported(), null, 2)}\n`, stderr: '' });
    assert.deepEqual(await gatehouse(['services', 'apply', '-'], { stdin: toStdout.stdout }), { code: 0, stdout: 'No changes: 2 services as declared.\n', stderr: '' });
  });

  it('a document the gateway refuses: exit status 1, its error and each field on a line, nothing applied', async () => {
    const before = await exported();
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ version: 1, services: [{ name: 'Bad', path: 'cli-bad', targetUrl: 'http://127.0.0.1:9' }, { name: 'Twin', path: '/cli-twin' }] }));
    for (const command of ['plan', 'apply']) {
      const run = await gatehouse(['services', command, file]);
      assert.deepEqual(run, {
        code: 1,
        stdout: '',
        stderr: [
          `gatehouse: ${session.gw.adminUrl}/api/services/apply answered 400: Invalid registry document: services[0].path must start with /; services[1].targetUrl is required`,
          '  services[0].path: must start with /',
          '  services[1].targetUrl: is required',
          '',
        ].join('\n'),
      });
    }
    assert.deepEqual(await exported(), before);
  });

  it('exit status 1 with a clear message for a token that cannot, a gateway that cannot be reached, a file that cannot be read, a missing variable', async () => {
    const file = join(dir, 'current.json');
    writeFileSync(file, JSON.stringify(await exported()));
    const fails = async (run: Promise<Run>, stderr: string | RegExp) => {
      const { code, stdout, stderr: said } = await run;
      assert.deepEqual([code, stdout], [1, '']);
      if (typeof stderr === 'string') assert.equal(said, stderr);
      else assert.match(said, stderr);
    };
    await fails(
      gatehouse(['services', 'apply', file], { token: read.secret }),
      `gatehouse: ${session.gw.adminUrl}/api/services/apply answered 403: Insufficient scope\nGATEHOUSE_TOKEN is a read token: plan and apply need a write token.\n`,
    );
    await fails(
      gatehouse(['services', 'export', '-'], { token: `ght_${'A'.repeat(43)}` }),
      `gatehouse: ${session.gw.adminUrl}/api/services/export answered 401: Not authenticated\nGATEHOUSE_TOKEN is not a live token of this gateway (unknown, expired or revoked).\n`,
    );
    const closed = `http://127.0.0.1:${await freePort()}`;
    await fails(gatehouse(['services', 'plan', file], { env: { GATEHOUSE_ADMIN_URL: closed } }), `gatehouse: cannot reach ${closed}: ECONNREFUSED\n`);
    await fails(gatehouse(['services', 'plan', join(dir, 'missing.json')]), /^gatehouse: cannot read .*missing\.json: ENOENT: no such file or directory/);
    writeFileSync(join(dir, 'broken.json'), '{"version": 1,');
    await fails(gatehouse(['services', 'apply', join(dir, 'broken.json')]), /^gatehouse: .*broken\.json is not JSON: /);
    await fails(gatehouse(['services', 'export', '-'], { env: { GATEHOUSE_TOKEN: undefined } }), /^gatehouse: GATEHOUSE_TOKEN is not set: an admin API token \(ght_…\)/);
    await fails(gatehouse(['services', 'export', '-'], { env: { GATEHOUSE_ADMIN_URL: '' } }), /^gatehouse: GATEHOUSE_ADMIN_URL is not set/);
    await fails(gatehouse(['services', 'export', '-'], { env: { GATEHOUSE_ADMIN_URL: 'admin.example.com' } }), 'gatehouse: GATEHOUSE_ADMIN_URL is not a URL: admin.example.com\n');
  });

  it('wrong usage: exit status 2 with the usage; --help: the usage, status 0', async () => {
    for (const args of [[], ['servers'], ['services'], ['services', 'destroy', 'x.json'], ['services', 'plan'], ['services', 'plan', 'a', 'b'], ['services', 'plan', '--force', 'x']]) {
      const run = await gatehouse(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.match(run.stderr, /^gatehouse: .+\n\nUsage: gatehouse services <command> <file>\n/, args.join(' '));
    }
    const help = await gatehouse(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: gatehouse services <command> <file>\n[\s\S]*GATEHOUSE_ADMIN_URL[\s\S]*GATEHOUSE_TOKEN/);
  });
});
