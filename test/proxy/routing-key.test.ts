import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { remainderAfter, routingKey } from '../../shared/routing/routing-key.js';

describe('routingKey', () => {
  it('is the path itself, the same string, when nothing needs a key', () => {
    for (const path of ['/', '/app', '/app/', '/a/b.c/d-e_f~g', '/a/é', '/a+b/c=d']) {
      assert.equal(routingKey(path), path);
    }
  });

  const cases: [string, string][] = [
    // percent-encoded unreserved characters are decoded (RFC 3986 §2.3), lowercased
    ['/py/%73ecret/x', '/py/secret/x'],
    ['/py/secre%74/x', '/py/secret/x'],
    ['/py/%53%45%43RET', '/py/secret'],
    ['/a/%2d%2E%5f%7E%30', '/a/-._~0'],
    // other escapes stay encoded, in lowercase hex
    ['/a/%20b/%C3%A9', '/a/%20b/%c3%a9'],
    ['/a/%3B/%25', '/a/%3b/%25'],
    // `/`, `\`, `%2F` and `%5C` separate segments; empty segments collapse
    ['/py//secret/x', '/py/secret/x'],
    ['/py///secret//x', '/py/secret/x'],
    ['/py/secret%2Fx', '/py/secret/x'],
    ['/py/secret%2fx', '/py/secret/x'],
    ['/py/secret%5Cx', '/py/secret/x'],
    ['/py/secret%5cx', '/py/secret/x'],
    ['/pub/secret\\x', '/pub/secret/x'],
    ['/%2F%5C/\\a', '/a'],
    // letters compare case-insensitively
    ['/EX/SECRET/x', '/ex/secret/x'],
    // `;` path parameters are left out, a segment of parameters only collapses
    ['/py/secret;jsessionid=1/x', '/py/secret/x'],
    ['/py;a=b/secret', '/py/secret'],
    ['/py/;x/secret', '/py/secret'],
    ['/a/b;c%2Fd/e', '/a/b/d/e'],
    // a trailing separator is kept as one `/`; no segments at all is `/`
    ['/app//', '/app/'],
    ['/App/', '/app/'],
    ['/app%2F', '/app/'],
    ['//', '/'],
    ['/%2F', '/'],
    ['/;x', '/'],
  ];
  for (const [path, key] of cases) {
    it(`${path} → ${key}`, () => assert.equal(routingKey(path), key));
  }
});

describe('remainderAfter', () => {
  const cases: [string, number, string][] = [
    // the bytes after the raw spelling of the prefix's segments, kept as they are
    ['/py/secret%2Fx', 1, '/secret%2Fx'],
    ['/rabbit/api/queues/%2F/q1', 1, '/api/queues/%2F/q1'],
    ['/App/%7Euser/a+b;c=d//e', 1, '/%7Euser/a+b;c=d//e'],
    ['/py/%73ecret/x', 2, '/x'],
    ['/EX/SECRET/x', 2, '/x'],
    // the run of separators at the boundary becomes one `/`
    ['/py/secret%2Fx', 2, '/x'],
    ['/py///secret//x', 2, '/x'],
    ['/py/secret%5C%2f\\/x/y//z', 2, '/x/y//z'],
    ['/pub%2F%2Fevil.example/x', 1, '/evil.example/x'],
    ['//x', 0, '/x'],
    ['/', 0, '/'],
    // parameters of the prefix's segments go with them; a parameters-only segment does not count
    ['/py/secret;jsessionid=1/x', 2, '/x'],
    ['/py/;x/secret/y', 2, '/y'],
    ['/a;p=1', 1, ''],
    // nothing, or only separators, after the prefix
    ['/py/secret', 2, ''],
    ['/py/secret//', 2, '/'],
    ['/py/secret%2F', 2, '/'],
  ];
  for (const [path, segments, rest] of cases) {
    it(`${path} after ${segments} segment(s) → ${JSON.stringify(rest)}`, () => {
      assert.equal(remainderAfter(path, segments), rest);
    });
  }
});
