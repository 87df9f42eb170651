import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError, type ErrorCode } from '../../shared/errors.js';
import { assertPolicyNeedsSignIn, MAX_POLICY_ENTRIES, MAX_POLICY_ENTRY_LENGTH } from '../../admin/registry/access-policy-fields.js';
import { parseServiceCreate, parseServiceUpdate, parseToggle } from '../../admin/registry/service-validation.js';
import { defaultPool } from './pool-fields.js';

const valid = { name: 'Orders', path: '/orders', targetUrl: 'http://localhost:3000' };

interface Expected {
  code?: ErrorCode;
  message?: string;
  fields?: Record<string, string>;
}

/** Asserts `run` throws a 400 GatewayError matching `expected`; returns it for further checks. */
function expect400(run: () => unknown, expected: Expected): GatewayError {
  let caught: unknown;
  assert.throws(run, (error) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof GatewayError, `expected a GatewayError, got ${String(caught)}`);
  assert.equal(caught.status, 400);
  assert.equal(caught.code, expected.code ?? 'BAD_REQUEST');
  if (expected.message !== undefined) assert.equal(caught.message, expected.message);
  if (expected.fields !== undefined) assert.deepEqual(caught.fields, expected.fields);
  return caught;
}

/** The reason given for `field` when creating with `value` for it. */
function reasonFor(field: string, value: unknown): string | undefined {
  const error = expect400(() => parseServiceCreate({ ...valid, [field]: value }), {});
  assert.deepEqual(Object.keys(error.fields ?? {}), [field]);
  return error.fields?.[field];
}

describe('parseServiceCreate: body shape and required fields', () => {
  it('returns the input with requireAuth defaulting to true, description to an empty string, no access policy and no bearer forwarding', () => {
    assert.deepEqual(parseServiceCreate(valid), { ...valid, requireAuth: true, description: '', access: null, forwardAuthorization: false, ...defaultPool(valid.targetUrl) });
  });

  it('keeps every optional field given', () => {
    const body = {
      ...valid,
      requireAuth: true,
      description: 'The orders API',
      access: { groups: ['ops'], emails: ['a@example.com'], emailDomains: ['example.org'], subjects: ['s-1'] },
      forwardAuthorization: true,
    };
    assert.deepEqual(parseServiceCreate(body), { ...body, ...defaultPool(valid.targetUrl) });
    assert.deepEqual(parseServiceCreate({ ...valid, requireAuth: false }), {
      ...valid,
      requireAuth: false,
      description: '',
      access: null,
      forwardAuthorization: false,
      ...defaultPool(valid.targetUrl),
    });
  });

  for (const body of [null, [], 'text', 42, true, [valid]]) {
    it(`rejects a body that is not a JSON object: ${JSON.stringify(body)}`, () => {
      expect400(() => parseServiceCreate(body), { message: 'Body must be a JSON object' });
    });
  }

  for (const field of ['name', 'path', 'targetUrl'] as const) {
    it(`answers the exact missing-fields message when ${field} is absent or null`, () => {
      const { [field]: _omitted, ...rest } = valid;
      for (const body of [rest, { ...rest, [field]: null }]) {
        expect400(() => parseServiceCreate(body), {
          code: 'MISSING_FIELDS',
          message: 'Missing required fields: name, path, targetUrl',
          fields: { [field]: 'is required' },
        });
      }
    });
  }

  it('answers the missing-fields message for an empty object, naming all three', () => {
    expect400(() => parseServiceCreate({}), {
      code: 'MISSING_FIELDS',
      message: 'Missing required fields: name, path, targetUrl',
      fields: { name: 'is required', path: 'is required', targetUrl: 'is required' },
    });
  });

  it('reports missing fields before unknown ones', () => {
    expect400(() => parseServiceCreate({ name: 'x', foo: 1 }), { code: 'MISSING_FIELDS' });
  });

  it('names unknown fields', () => {
    expect400(() => parseServiceCreate({ ...valid, foo: 1, bar: 2 }), {
      message: 'Unknown fields: foo, bar',
      fields: { foo: 'unknown field', bar: 'unknown field' },
    });
  });

  it('treats read-only and server-set fields as unknown on create', () => {
    expect400(() => parseServiceCreate({ ...valid, id: 'x', enabled: false }), {
      message: 'Unknown fields: id, enabled',
    });
  });

  it('collects every bad field, and unknown ones, into one error', () => {
    expect400(() => parseServiceCreate({ name: '', path: 'orders', targetUrl: 'ftp://x', requireAuth: 'yes', extra: 1 }), {
      message:
        'Invalid service: name must not be empty; path must start with /; ' +
        'targetUrl must be an absolute http:, https: or h2c: URL with a host; requireAuth must be a boolean. ' +
        'Unknown fields: extra',
      fields: {
        name: 'must not be empty',
        path: 'must start with /',
        targetUrl: 'must be an absolute http:, https: or h2c: URL with a host',
        requireAuth: 'must be a boolean',
        extra: 'unknown field',
      },
    });
  });

  it('says what is wrong in a readable message', () => {
    expect400(() => parseServiceCreate({ ...valid, path: 'orders' }), {
      message: 'Invalid service: path must start with /',
      fields: { path: 'must start with /' },
    });
  });
});

describe('parseServiceCreate: path (design.md §5)', () => {
  const accepted = ['/', '/orders', '/a/b/c', '/A-Z_a-z.0-9~', '/v1.2', '/a..b', '/.well-known', '/authx', '/apis', '/dashboards', '/x/auth', '/' + 'a'.repeat(199)];
  for (const path of accepted) {
    it(`accepts ${path.length > 40 ? `a ${path.length}-character path` : path}`, () => {
      assert.equal(parseServiceCreate({ ...valid, path }).path, path);
    });
  }

  const rejected: [unknown, string][] = [
    ['orders', 'must start with /'],
    ['', 'must start with /'],
    ['/orders/', 'must not end with /'],
    ['//', 'must not end with /'],
    ['/a//b', 'must not contain an empty segment (//)'],
    ['//a', 'must not contain an empty segment (//)'],
    ['/.', 'must not contain a . or .. segment'],
    ['/..', 'must not contain a . or .. segment'],
    ['/a/./b', 'must not contain a . or .. segment'],
    ['/a/..', 'must not contain a . or .. segment'],
    ['/a b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/a%20b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/café', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/a?b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/a#b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/a\\b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/a;b', 'segments may only contain A-Z a-z 0-9 . _ ~ -'],
    ['/auth', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/auth/x', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/api', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/api/services', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/dashboard', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/dashboard/stats', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    // routing compares paths case-insensitively, so these are gateway paths too
    ['/API', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/Auth/x', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/DashBoard', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/.well-known/jwks.json', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/.Well-Known/JWKS.json/x', 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)'],
    ['/' + 'a'.repeat(200), 'must be at most 200 characters'],
    [5, 'must be a string'],
    [true, 'must be a string'],
    [['/a'], 'must be a string'],
  ];
  for (const [path, reason] of rejected) {
    it(`rejects ${JSON.stringify(path).slice(0, 40)}: ${reason}`, () => {
      assert.equal(reasonFor('path', path), reason);
    });
  }
});

describe('parseServiceCreate: targetUrl (design.md §5)', () => {
  const accepted = [
    'http://localhost:3000',
    'https://example.com',
    'https://example.com/base/path',
    'http://example.com/base/',
    'http://10.0.0.1:8080',
    'http://[::1]:8080/x',
    'HTTPS://Example.COM/A',
    'http://host/a@b',
    'https://example.com/' + 'a'.repeat(2048 - 'https://example.com/'.length),
  ];
  for (const targetUrl of accepted) {
    it(`accepts ${targetUrl.slice(0, 50)} and stores it as given`, () => {
      assert.equal(parseServiceCreate({ ...valid, targetUrl }).targetUrl, targetUrl);
    });
  }

  const notAbsolute = 'must be an absolute http:, https: or h2c: URL with a host';
  const rejected: [unknown, string][] = [
    ['ftp://example.com', notAbsolute],
    ['file:///etc/passwd', notAbsolute],
    ['javascript:alert(1)', notAbsolute],
    ['/relative/path', notAbsolute],
    ['localhost:3000', notAbsolute],
    ['example.com', notAbsolute],
    ['http://', notAbsolute],
    ['http:/host', notAbsolute],
    ['http:\\\\host\\x', notAbsolute],
    ['http://host:99999', notAbsolute],
    ['', notAbsolute],
    ['http://user:secret@host', 'must not contain user info'],
    ['http://user@host/x', 'must not contain user info'],
    ['http://@host', 'must not contain user info'],
    ['http://host/?a=1', 'must not contain a query'],
    ['http://host/?', 'must not contain a query'],
    ['http://host/#top', 'must not contain a fragment'],
    ['http://host#', 'must not contain a fragment'],
    [' http://host', 'must not contain whitespace or control characters'],
    ['http://host/a b', 'must not contain whitespace or control characters'],
    ['http://host/\n', 'must not contain whitespace or control characters'],
    ['https://example.com/' + 'a'.repeat(2049 - 'https://example.com/'.length), 'must be at most 2048 characters'],
    [42, 'must be a string'],
    [{ href: 'http://x' }, 'must be a string'],
  ];
  for (const [targetUrl, reason] of rejected) {
    it(`rejects ${JSON.stringify(targetUrl).slice(0, 50)}: ${reason}`, () => {
      assert.equal(reasonFor('targetUrl', targetUrl), reason);
    });
  }
});

describe('parseServiceCreate: name, description, requireAuth (design.md §5)', () => {
  it('stores the name trimmed', () => {
    assert.equal(parseServiceCreate({ ...valid, name: '  Orders API \n' }).name, 'Orders API');
  });

  it('accepts names of 1 and 100 characters, counting code points', () => {
    assert.equal(parseServiceCreate({ ...valid, name: 'x' }).name, 'x');
    assert.equal(parseServiceCreate({ ...valid, name: 'n'.repeat(100) }).name.length, 100);
    assert.equal(parseServiceCreate({ ...valid, name: '😀'.repeat(100) }).name, '😀'.repeat(100));
  });

  it('rejects empty, blank, too long and non-string names', () => {
    assert.equal(reasonFor('name', ''), 'must not be empty');
    assert.equal(reasonFor('name', '   '), 'must not be empty');
    assert.equal(reasonFor('name', 'n'.repeat(101)), 'must be at most 100 characters');
    assert.equal(reasonFor('name', ` ${'n'.repeat(101)} `), 'must be at most 100 characters');
    assert.equal(reasonFor('name', 42), 'must be a string');
  });

  it('accepts a description up to 1000 characters, kept as given', () => {
    const description = ` ${'d'.repeat(998)} `;
    assert.equal(parseServiceCreate({ ...valid, description }).description, description);
    assert.equal(parseServiceCreate({ ...valid, description: '' }).description, '');
  });

  it('rejects a description over 1000 characters or not a string', () => {
    assert.equal(reasonFor('description', 'd'.repeat(1001)), 'must be at most 1000 characters');
    assert.equal(reasonFor('description', null), 'must be a string');
    assert.equal(reasonFor('description', 7), 'must be a string');
  });

  it('accepts requireAuth true and false', () => {
    assert.equal(parseServiceCreate({ ...valid, requireAuth: false }).requireAuth, false);
    assert.equal(parseServiceCreate({ ...valid, requireAuth: true }).requireAuth, true);
  });

  for (const value of ['yes', 'true', 1, 0, null, {}]) {
    it(`rejects requireAuth ${JSON.stringify(value)}`, () => {
      assert.equal(reasonFor('requireAuth', value), 'must be a boolean');
    });
  }
});

describe('parseServiceCreate: access and forwardAuthorization (design.md §4.7)', () => {
  /** The reasons given, by field, when creating with `access`. */
  const accessReasons = (access: unknown) => expect400(() => parseServiceCreate({ ...valid, access }), {}).fields;

  it('normalises a policy: entries trimmed and kept once, emails and domains lowercased, absent lists empty', () => {
    const access = { groups: [' ops ', 'ops', 'Ops'], emails: ['Ann@Example.COM', 'ann@example.com '], emailDomains: ['Example.ORG'] };
    assert.deepEqual(parseServiceCreate({ ...valid, access }).access, {
      groups: ['ops', 'Ops'],
      emails: ['ann@example.com'],
      emailDomains: ['example.org'],
      subjects: [],
    });
    assert.deepEqual(parseServiceCreate({ ...valid, access: { subjects: ['Sub-1'] } }).access, { groups: [], emails: [], emailDomains: [], subjects: ['Sub-1'] });
  });

  it('reads null, an empty object and all-empty lists as no policy', () => {
    for (const access of [null, {}, { groups: [], emails: [], emailDomains: [], subjects: [] }]) {
      assert.equal(parseServiceCreate({ ...valid, access }).access, null, JSON.stringify(access));
    }
  });

  it('names each bad list in fields as access.<list>', () => {
    assert.deepEqual(accessReasons({ emailDomains: ['user@example.com'] }), { 'access.emailDomains': 'must be a domain without @ (got "user@example.com")' });
    assert.deepEqual(accessReasons({ emailDomains: ['example..com'] }), { 'access.emailDomains': 'must be a domain such as example.com (got "example..com")' });
    assert.deepEqual(accessReasons({ emails: ['not-an-email'] }), { 'access.emails': 'must be an email address (got "not-an-email")' });
    assert.deepEqual(accessReasons({ emails: ['a b@example.com'] }), { 'access.emails': 'must be an email address (got "a b@example.com")' });
    assert.deepEqual(accessReasons({ groups: ['ops', '  '] }), { 'access.groups': 'must not contain an empty entry' });
    assert.deepEqual(accessReasons({ subjects: [''] }), { 'access.subjects': 'must not contain an empty entry' });
    assert.deepEqual(accessReasons({ subjects: ['s', 7] }), { 'access.subjects': 'must contain only strings' });
    assert.deepEqual(accessReasons({ groups: 'ops' }), { 'access.groups': 'must be a list of strings' });
    assert.deepEqual(accessReasons({ groups: ['g'.repeat(MAX_POLICY_ENTRY_LENGTH + 1)] }), { 'access.groups': `entries must be at most ${MAX_POLICY_ENTRY_LENGTH} characters` });
    const many = Array.from({ length: MAX_POLICY_ENTRIES + 1 }, (_, i) => `g${i}`);
    assert.deepEqual(accessReasons({ groups: many }), { 'access.groups': `must have at most ${MAX_POLICY_ENTRIES} entries` });
  });

  it('names every bad list at once, and unknown keys of the policy', () => {
    const error = expect400(() => parseServiceCreate({ ...valid, access: { emails: ['x'], emailDomains: ['@x'], roles: ['admin'] } }), {
      fields: {
        'access.emails': 'must be an email address (got "x")',
        'access.emailDomains': 'must be a domain without @ (got "@x")',
        'access.roles': 'unknown field',
      },
    });
    assert.match(error.message, /^Invalid service: access\.emails must be an email address/);
  });

  for (const access of ['ops', 42, true, [['ops']]]) {
    it(`rejects access ${JSON.stringify(access)}: must be an object or null`, () => {
      assert.equal(reasonFor('access', access), 'must be an object or null');
    });
  }

  it('refuses a policy on a service without requireAuth, naming access', () => {
    expect400(() => parseServiceCreate({ ...valid, requireAuth: false, access: { groups: ['ops'] } }), {
      message: 'Invalid service: access needs requireAuth',
      fields: { access: 'needs requireAuth' },
    });
    assert.equal(parseServiceCreate({ ...valid, requireAuth: false, access: { groups: [] } }).access, null, 'an empty policy is none');
    expect400(() => assertPolicyNeedsSignIn({ requireAuth: false, access: { groups: ['ops'], emails: [], emailDomains: [], subjects: [] } }), { fields: { access: 'needs requireAuth' } });
    assertPolicyNeedsSignIn({ requireAuth: false, access: null });
  });

  it('accepts forwardAuthorization true and false, and refuses anything else', () => {
    assert.equal(parseServiceCreate({ ...valid, forwardAuthorization: true }).forwardAuthorization, true);
    assert.equal(parseServiceCreate({ ...valid, forwardAuthorization: false }).forwardAuthorization, false);
    for (const value of ['true', 1, null]) assert.equal(reasonFor('forwardAuthorization', value), 'must be a boolean');
  });

  it('a PUT body: access and forwardAuthorization only when given, access null kept as a removal', () => {
    assert.deepEqual(parseServiceUpdate({ access: null, forwardAuthorization: true }), { access: null, forwardAuthorization: true });
    assert.deepEqual(parseServiceUpdate({ access: { emailDomains: ['EXAMPLE.com'] } }), { access: { groups: [], emails: [], emailDomains: ['example.com'], subjects: [] } });
    expect400(() => parseServiceUpdate({ access: { emailDomains: ['a@b'] } }), { fields: { 'access.emailDomains': 'must be a domain without @ (got "a@b")' } });
  });
});

describe('parseServiceUpdate', () => {
  it('accepts an empty object as a no-op patch', () => {
    assert.deepEqual(parseServiceUpdate({}), {});
  });

  it('returns only the fields given, validated, with no defaults', () => {
    assert.deepEqual(parseServiceUpdate({ name: '  New  ' }), { name: 'New' });
    assert.deepEqual(parseServiceUpdate({ requireAuth: false, enabled: true }), { requireAuth: false, enabled: true });
  });

  it('ignores the read-only id, createdAt and updatedAt', () => {
    const body = { id: 'other', createdAt: 'x', updatedAt: 'y', description: 'd' };
    assert.deepEqual(parseServiceUpdate(body), { description: 'd' });
  });

  it('applies the same rules as create', () => {
    expect400(() => parseServiceUpdate({ path: '/api/x', targetUrl: 'http://h/?q', name: '' }), {
      fields: {
        name: 'must not be empty',
        path: 'must not be or sit under a gateway path (/auth, /api, /dashboard, /.well-known/jwks.json)',
        targetUrl: 'must not contain a query',
      },
    });
  });

  it('rejects null for a field rather than treating it as absent', () => {
    expect400(() => parseServiceUpdate({ name: null }), { fields: { name: 'must be a string' } });
  });

  it('rejects a non-boolean enabled', () => {
    expect400(() => parseServiceUpdate({ enabled: 'false' }), {
      message: 'Invalid service: enabled must be a boolean',
      fields: { enabled: 'must be a boolean' },
    });
  });

  it('names unknown fields', () => {
    expect400(() => parseServiceUpdate({ name: 'ok', target: 'http://x' }), {
      message: 'Unknown fields: target',
      fields: { target: 'unknown field' },
    });
  });

  it('rejects a body that is not a JSON object', () => {
    for (const body of [null, [], 'x', 1]) {
      expect400(() => parseServiceUpdate(body), { message: 'Body must be a JSON object' });
    }
  });
});

describe('parseToggle', () => {
  it('accepts enabled true and false', () => {
    assert.deepEqual(parseToggle({ enabled: true }), { enabled: true });
    assert.deepEqual(parseToggle({ enabled: false }), { enabled: false });
  });

  it('requires enabled', () => {
    expect400(() => parseToggle({}), {
      message: 'Invalid toggle body: enabled is required',
      fields: { enabled: 'is required' },
    });
  });

  for (const value of ['false', 0, 1, null, []]) {
    it(`rejects enabled ${JSON.stringify(value)}`, () => {
      expect400(() => parseToggle({ enabled: value }), { fields: { enabled: 'must be a boolean' } });
    });
  }

  it('names unknown fields', () => {
    expect400(() => parseToggle({ enabled: true, name: 'x' }), { fields: { name: 'unknown field' } });
  });

  it('rejects a body that is not a JSON object', () => {
    for (const body of [null, [], true]) {
      expect400(() => parseToggle(body), { message: 'Body must be a JSON object' });
    }
  });
});
