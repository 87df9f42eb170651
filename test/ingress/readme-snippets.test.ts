/**
 * README "Behind an existing ingress" shows the configurations test/ingress/ runs: every line of
 * its nginx, Caddy, HAProxy and Lua snippets (but the listening address, comments and the
 * site's name) is a line of what ingress-configs.ts writes for the same addresses.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { caddyConfig, haproxyConfig, haproxyLua, nginxConfig, type IngressSite } from '../support/ingress-configs.js';

const README = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
const SECTION = README.slice(README.indexOf('### Behind an existing ingress'), README.indexOf('\n## ', README.indexOf('### Behind an existing ingress')));
const SITE: IngressSite = { port: 80, gateway: '127.0.0.1:8080', upstream: '10.0.0.5:3000' };

/** The lines of the README's first fenced block in `language`, trimmed, without comments (from `comment`), blank lines and `skipped` ones. */
function snippet(language: string, skipped: RegExp, comment: string): string[] {
  const start = SECTION.indexOf('```' + language + '\n');
  assert.ok(start >= 0, `no ${language} block`);
  const body = SECTION.slice(start + language.length + 4, SECTION.indexOf('\n```', start + 3));
  return body
    .split('\n')
    .map((line) => {
      const at = line.indexOf(` ${comment} `);
      return (at === -1 ? line : line.slice(0, at)).trim();
    })
    .filter((line) => line !== '' && !line.startsWith(comment) && !skipped.test(line));
}

/** `config`'s lines, trimmed, with runs of spaces as one. */
function linesOf(config: string): Set<string> {
  return new Set(config.split('\n').map((line) => line.trim().replace(/\s+/g, ' ')));
}

function assertShown(language: string, config: string, skipped: RegExp, comment = '#'): void {
  const lines = linesOf(config);
  for (const line of snippet(language, skipped, comment)) assert.ok(lines.has(line.replace(/\s+/g, ' ')), `${language}: ${line}`);
}

describe('README "Behind an existing ingress" shows the tested configurations', () => {
  it('nginx', () => assertShown('nginx', nginxConfig(SITE, '/tmp', false), /^(listen |server \{|\}$)/));
  it('Caddy', () => assertShown('caddyfile', caddyConfig(SITE, '/tmp'), /^app\.example\.com \{$/));
  it('HAProxy and its Lua action', () => {
    assertShown('haproxy', haproxyConfig(SITE, '/etc/haproxy'), /^bind /);
    assertShown('lua', haproxyLua(), /^$/, '--');
  });
});
