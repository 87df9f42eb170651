/**
 * The pool's service fields (design.md §4.13) as the admin API validates them (admin/registry/service-validation.ts): `targets`
 * and how they make one with `targetUrl`, `loadBalancing`, `healthCheck`, `outlierDetection` and
 * `retries`, their defaults, ranges and exact messages, on a create body, a PUT body and a registry
 * document's entry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseServiceCreate, parseServiceEntry, parseServiceUpdate } from '../../admin/registry/service-validation.js';
import { GatewayError } from '../../shared/errors.js';
import { DEFAULT_HEALTH_CHECK, defaultPool } from './pool-fields.js';

const valid = { name: 'Orders', path: '/orders', targetUrl: 'http://orders-1:8080' };
const ordersPool = [
  { url: 'http://orders-1:8080', weight: 3 },
  { url: 'http://orders-2:8080', weight: 1 },
];

/** The 400 `run` throws: its message and fields. */
function refusal(run: () => unknown): { code: string; message: string; fields: Record<string, string> | undefined } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    assert.equal(error.status, 400);
    return { code: error.code, message: error.message, fields: error.fields };
  }
  assert.fail('expected a 400');
}

/** The fields of the 400 a create body `{ ...valid, ...extra }` gets. */
const createFields = (extra: Record<string, unknown>) => refusal(() => parseServiceCreate({ ...valid, ...extra })).fields;

/** The reason for `field` alone when a create body gives `extra`. */
function reasonOf(field: string, extra: Record<string, unknown>): string {
  const fields = createFields(extra);
  assert.deepEqual(Object.keys(fields ?? {}), [field], JSON.stringify(fields));
  return fields![field]!;
}

describe('targets and targetUrl on create', () => {
  it('targetUrl alone is the one target, weight 1; every pool field takes its default', () => {
    assert.deepEqual(parseServiceCreate(valid), { ...valid, requireAuth: true, description: '', access: null, forwardAuthorization: false, ...defaultPool(valid.targetUrl) });
  });

  it('targets alone give targetUrl their first url; a weight defaults to 1', () => {
    const input = parseServiceCreate({ name: 'Orders', path: '/orders', targets: [ordersPool[0], { url: 'http://orders-2:8080' }] });
    assert.equal(input.targetUrl, 'http://orders-1:8080');
    assert.deepEqual(input.targets, ordersPool);
  });

  it('both, agreeing (targetUrl the first url), are taken as given', () => {
    assert.deepEqual(parseServiceCreate({ ...valid, targets: ordersPool }).targets, ordersPool);
  });

  it('both, disagreeing: 400 naming targetUrl', () => {
    const error = refusal(() => parseServiceCreate({ ...valid, targets: [...ordersPool].reverse() }));
    assert.deepEqual(error, {
      code: 'BAD_REQUEST',
      message: 'Invalid service: targetUrl must be the first target\'s url ("http://orders-2:8080")',
      fields: { targetUrl: 'must be the first target\'s url ("http://orders-2:8080")' },
    });
  });

  it('neither (absent or null): the exact missing-fields message naming targetUrl, with the other missing fields', () => {
    for (const body of [{ name: 'Orders', path: '/orders' }, { name: 'Orders', path: '/orders', targetUrl: null, targets: null }]) {
      assert.deepEqual(refusal(() => parseServiceCreate(body)), {
        code: 'MISSING_FIELDS',
        message: 'Missing required fields: name, path, targetUrl',
        fields: { targetUrl: 'is required' },
      });
    }
    assert.deepEqual(refusal(() => parseServiceCreate({ path: '/orders' })).fields, { name: 'is required', targetUrl: 'is required' });
    assert.equal(refusal(() => parseServiceCreate({ name: 'Orders', targets: ordersPool })).code, 'MISSING_FIELDS', 'targets do not stand in for path');
  });

  it('1 to 64 targets', () => {
    const pool = (count: number) => Array.from({ length: count }, (_, i) => ({ url: `http://orders-${i}:8080` }));
    assert.equal(parseServiceCreate({ name: 'Orders', path: '/orders', targets: pool(64) }).targets.length, 64);
    for (const count of [0, 65]) assert.equal(reasonOf('targets', { targets: pool(count), targetUrl: undefined }), 'must have 1 to 64 targets');
  });

  it('weights are integers from 1 to 100, the value quoted', () => {
    assert.deepEqual(parseServiceCreate({ ...valid, targets: [{ url: valid.targetUrl, weight: 100 }] }).targets, [{ url: valid.targetUrl, weight: 100 }]);
    for (const weight of [0, 101, 1.5, '2', null, -1]) {
      assert.equal(reasonOf('targets', { targets: [{ url: valid.targetUrl, weight }] }), `weight must be an integer from 1 to 100 (got ${JSON.stringify(weight)})`);
    }
  });

  it('each url by targetUrl\'s rules, named and quoted', () => {
    const cases: [unknown, string][] = [
      ['ftp://orders', 'must be an absolute http:, https: or h2c: URL with a host'],
      ['http://user:pw@orders', 'must not contain user info'],
      ['http://orders/?a=1', 'must not contain a query'],
      ['http://orders/#top', 'must not contain a fragment'],
      ['http://orders /x', 'must not contain whitespace or control characters'],
      [42, 'must be a string'],
    ];
    for (const [url, why] of cases) {
      assert.equal(reasonOf('targets', { targetUrl: undefined, targets: [{ url: 'http://orders-0' }, { url }] }), `url ${why} (got ${JSON.stringify(url)})`);
    }
    assert.equal(reasonOf('targets', { targetUrl: undefined, targets: [{ url: `http://orders/${'a'.repeat(2048)}` }] }), 'url must be at most 2048 characters');
  });

  it('the same url twice is refused, compared as URLs', () => {
    for (const twin of ['http://orders-1:8080', 'HTTP://Orders-1:8080/']) {
      assert.equal(reasonOf('targets', { targets: [...ordersPool, { url: twin }] }), `must not list a url twice (got ${JSON.stringify(twin)})`);
    }
    assert.equal(parseServiceCreate({ ...valid, targets: [...ordersPool, { url: 'http://orders-1:8080/v2' }] }).targets.length, 3, 'another base path is another target');
  });

  it('a target is an object of url and weight only', () => {
    assert.equal(reasonOf('targets', { targets: [{ url: valid.targetUrl, host: 'x' }] }), 'may only have url and weight (got "host")');
    assert.equal(reasonOf('targets', { targets: [{ weight: 2 }] }), 'each need a url');
    assert.equal(reasonOf('targets', { targets: [valid.targetUrl] }), `must contain only objects { url, weight } (got ${JSON.stringify(valid.targetUrl)})`);
    for (const targets of [valid.targetUrl, { url: valid.targetUrl }, 3]) assert.equal(reasonOf('targets', { targets }), 'must be a list of targets { url, weight }');
  });

  it('an invalid targetUrl beside targets is its own field\'s reason, before any agreement', () => {
    assert.deepEqual(createFields({ targetUrl: 'orders', targets: ordersPool }), { targetUrl: 'must be an absolute http:, https: or h2c: URL with a host' });
  });
});

describe('loadBalancing and retries', () => {
  it('loadBalancing: one of the four, round_robin by default', () => {
    for (const method of ['round_robin', 'least_requests', 'client_ip', 'cookie']) {
      assert.equal(parseServiceCreate({ ...valid, loadBalancing: method }).loadBalancing, method);
    }
    for (const method of ['random', 'ROUND_ROBIN', null, 1]) {
      assert.equal(reasonOf('loadBalancing', { loadBalancing: method }), 'must be one of round_robin, least_requests, client_ip, cookie');
    }
  });

  it('retries: an integer from 0 to 5, 1 by default', () => {
    for (const retries of [0, 5]) assert.equal(parseServiceCreate({ ...valid, retries }).retries, retries);
    for (const retries of [-1, 6, 1.5, '1', null]) assert.equal(reasonOf('retries', { retries }), 'must be an integer from 0 to 5');
  });
});

describe('healthCheck', () => {
  it('null by default and when given; an object has its absent fields filled in', () => {
    assert.equal(parseServiceCreate({ ...valid, healthCheck: null }).healthCheck, null);
    assert.deepEqual(parseServiceCreate({ ...valid, healthCheck: {} }).healthCheck, DEFAULT_HEALTH_CHECK);
    assert.deepEqual(parseServiceCreate({ ...valid, healthCheck: { path: '/healthz', expectStatus: 204 } }).healthCheck, { ...DEFAULT_HEALTH_CHECK, path: '/healthz', expectStatus: 204 });
    const full = { path: '/status/ready', intervalSeconds: 300, timeoutMs: 60_000, healthyThreshold: 10, unhealthyThreshold: 1, expectStatus: '3xx' };
    assert.deepEqual(parseServiceCreate({ ...valid, healthCheck: full }).healthCheck, full);
  });

  it('each number in its range, the bounds included', () => {
    const ranges: [string, number, number][] = [
      ['intervalSeconds', 1, 300],
      ['timeoutMs', 100, 60_000],
      ['healthyThreshold', 1, 10],
      ['unhealthyThreshold', 1, 10],
    ];
    for (const [field, min, max] of ranges) {
      const roomy = { intervalSeconds: 300, timeoutMs: 100 };
      for (const value of [min, max]) assert.equal((parseServiceCreate({ ...valid, healthCheck: { ...roomy, [field]: value } }).healthCheck as Record<string, unknown>)[field], value);
      for (const value of [min - 1, max + 1, min + 0.5, String(min), null]) {
        assert.equal(reasonOf(`healthCheck.${field}`, { healthCheck: { ...roomy, [field]: value } }), `must be an integer from ${min} to ${max}`);
      }
    }
  });

  it('timeoutMs below the interval, reported on healthCheck', () => {
    assert.equal(parseServiceCreate({ ...valid, healthCheck: { intervalSeconds: 2, timeoutMs: 1999 } }).healthCheck?.timeoutMs, 1999);
    for (const healthCheck of [{ intervalSeconds: 2, timeoutMs: 2000 }, { intervalSeconds: 1 }, { timeoutMs: 10_001 }]) {
      assert.deepEqual(refusal(() => parseServiceCreate({ ...valid, healthCheck })), {
        code: 'BAD_REQUEST',
        message: 'Invalid service: healthCheck timeoutMs must be below intervalSeconds × 1000',
        fields: { healthCheck: 'timeoutMs must be below intervalSeconds × 1000' },
      });
    }
  });

  it('expectStatus: a status from 100 to 599 or a class "1xx" to "5xx"', () => {
    for (const expectStatus of [100, 200, 599, '1xx', '5xx']) assert.equal(parseServiceCreate({ ...valid, healthCheck: { expectStatus } }).healthCheck?.expectStatus, expectStatus);
    for (const expectStatus of [99, 600, 200.5, '200', '2XX', '6xx', 'xx', null]) {
      assert.equal(reasonOf('healthCheck.expectStatus', { healthCheck: { expectStatus } }), 'must be a status from 100 to 599 or a class from "1xx" to "5xx"');
    }
  });

  it('path: starts with /, no whitespace, query or fragment, at most 200 characters', () => {
    assert.equal(parseServiceCreate({ ...valid, healthCheck: { path: `/${'a'.repeat(199)}` } }).healthCheck?.path.length, 200);
    const cases: [unknown, string][] = [
      ['healthz', 'must start with /'],
      ['/health z', 'must not contain whitespace or control characters'],
      ['/health\u0000', 'must not contain whitespace or control characters'],
      ['/health?full=1', 'must not contain a query'],
      ['/health#x', 'must not contain a fragment'],
      [`/${'a'.repeat(200)}`, 'must be at most 200 characters'],
      [7, 'must be a string'],
    ];
    for (const [path, why] of cases) assert.equal(reasonOf('healthCheck.path', { healthCheck: { path } }), why, String(path));
  });

  it('an object or null, no unknown field', () => {
    for (const healthCheck of [[], 'on', true, 5]) assert.equal(reasonOf('healthCheck', { healthCheck }), 'must be an object or null');
    assert.deepEqual(createFields({ healthCheck: { interval: 5 } }), { 'healthCheck.interval': 'unknown field' });
  });
});

describe('outlierDetection', () => {
  it('defaults when absent; an object has its absent fields filled in', () => {
    const defaults = { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 };
    assert.deepEqual(parseServiceCreate(valid).outlierDetection, defaults);
    assert.deepEqual(parseServiceCreate({ ...valid, outlierDetection: {} }).outlierDetection, defaults);
    assert.deepEqual(parseServiceCreate({ ...valid, outlierDetection: { maxFails: 5 } }).outlierDetection, { ...defaults, maxFails: 5 });
  });

  it('each number in its range, the bounds included', () => {
    const ranges: [string, number, number][] = [
      ['maxFails', 1, 100],
      ['windowSeconds', 1, 3600],
      ['ejectSeconds', 1, 3600],
    ];
    for (const [field, min, max] of ranges) {
      for (const value of [min, max]) assert.equal((parseServiceCreate({ ...valid, outlierDetection: { [field]: value } }).outlierDetection as Record<string, unknown>)[field], value);
      for (const value of [min - 1, max + 1, 2.5, '3', null]) {
        assert.equal(reasonOf(`outlierDetection.${field}`, { outlierDetection: { [field]: value } }), `must be an integer from ${min} to ${max}`);
      }
    }
  });

  it('null is refused (passive checks are always on), as are other values and unknown fields', () => {
    for (const outlierDetection of [null, [], 'off', false]) assert.equal(reasonOf('outlierDetection', { outlierDetection }), 'must be an object');
    assert.deepEqual(createFields({ outlierDetection: { maxFailures: 5 } }), { 'outlierDetection.maxFailures': 'unknown field' });
  });
});

describe('every problem at once', () => {
  it('each field named with its first reason', () => {
    assert.deepEqual(refusal(() => parseServiceCreate({ ...valid, targets: [], loadBalancing: 'random', retries: 9, healthCheck: { timeoutMs: 1 }, outlierDetection: null })), {
      code: 'BAD_REQUEST',
      message:
        'Invalid service: targets must have 1 to 64 targets; loadBalancing must be one of round_robin, least_requests, client_ip, cookie; ' +
        'healthCheck.timeoutMs must be an integer from 100 to 60000; outlierDetection must be an object; retries must be an integer from 0 to 5',
      fields: {
        targets: 'must have 1 to 64 targets',
        loadBalancing: 'must be one of round_robin, least_requests, client_ip, cookie',
        'healthCheck.timeoutMs': 'must be an integer from 100 to 60000',
        outlierDetection: 'must be an object',
        retries: 'must be an integer from 0 to 5',
      },
    });
  });
});

describe('a PUT body', () => {
  it('a lone targetUrl replaces the pool with that one target', () => {
    assert.deepEqual(parseServiceUpdate({ targetUrl: 'http://orders-9' }), { targetUrl: 'http://orders-9', targets: [{ url: 'http://orders-9', weight: 1 }] });
  });

  it('lone targets set targetUrl to their first url; both must agree', () => {
    assert.deepEqual(parseServiceUpdate({ targets: ordersPool }), { targetUrl: 'http://orders-1:8080', targets: ordersPool });
    assert.deepEqual(parseServiceUpdate({ targetUrl: 'http://orders-1:8080', targets: ordersPool }), { targetUrl: 'http://orders-1:8080', targets: ordersPool });
    assert.deepEqual(refusal(() => parseServiceUpdate({ targetUrl: 'http://orders-2:8080', targets: ordersPool })).fields, {
      targetUrl: 'must be the first target\'s url ("http://orders-1:8080")',
    });
  });

  it('the other pool fields only when given; a health check or outlier detection object has its absent fields filled in', () => {
    assert.deepEqual(parseServiceUpdate({ name: 'Renamed' }), { name: 'Renamed' });
    assert.deepEqual(parseServiceUpdate({ healthCheck: null, retries: 0, loadBalancing: 'cookie' }), { healthCheck: null, retries: 0, loadBalancing: 'cookie' });
    assert.deepEqual(parseServiceUpdate({ healthCheck: { path: '/up' }, outlierDetection: { ejectSeconds: 60 } }), {
      healthCheck: { ...DEFAULT_HEALTH_CHECK, path: '/up' },
      outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
    });
  });

  it('the same rules and messages as a create body', () => {
    assert.deepEqual(refusal(() => parseServiceUpdate({ targets: [], outlierDetection: null, healthCheck: { expectStatus: '2XX' } })).fields, {
      targets: 'must have 1 to 64 targets',
      'healthCheck.expectStatus': 'must be a status from 100 to 599 or a class from "1xx" to "5xx"',
      outlierDetection: 'must be an object',
    });
  });
});

describe('a registry document\'s entry', () => {
  it('from before pools (only targetUrl): the one target, defaults filled in', () => {
    assert.deepEqual(parseServiceEntry({ id: 'ignored', ...valid, enabled: false }), {
      ...valid,
      requireAuth: true,
      description: '',
      access: null,
      forwardAuthorization: false,
      enabled: false,
      ...defaultPool(valid.targetUrl),
    });
  });

  it('with a pool: by the create body\'s rules', () => {
    const entry = { ...valid, targets: ordersPool, loadBalancing: 'client_ip', healthCheck: { path: '/ready' }, outlierDetection: { maxFails: 10 }, retries: 2 };
    assert.deepEqual(parseServiceEntry(entry), {
      ...entry,
      requireAuth: true,
      description: '',
      access: null,
      forwardAuthorization: false,
      enabled: true,
      healthCheck: { ...DEFAULT_HEALTH_CHECK, path: '/ready' },
      outlierDetection: { maxFails: 10, windowSeconds: 10, ejectSeconds: 30 },
      rules: [],
      corsPreflight: 'auth',
      maxAge: null,
      acr: null,
    });
    assert.deepEqual(refusal(() => parseServiceEntry({ ...entry, targetUrl: 'http://elsewhere' })).fields, { targetUrl: 'must be the first target\'s url ("http://orders-1:8080")' });
  });
});
