/**
 * When a failed attempt may go to another target of the pool (proxy/pool/retry-policy.ts), the
 * whole table: every method × how the attempt failed × what follows the request head, against the
 * rule of RFC 9110 §9.2.2 written out here as a table of its own:
 * - `not-sent` (nothing reached the target): retried whatever the method, unless a byte of the
 *   body was read from the client (it cannot be sent again);
 * - `sent` (the target had the request): retried only for an idempotent method (GET, HEAD,
 *   OPTIONS, TRACE, PUT, DELETE) with no body at all: not with an upgrade, not with a streamed body;
 * - `timeout`: never (the request's whole budget is spent).
 * Methods are case-sensitive (RFC 9110 §9.1): `get` is not GET, and is not idempotent.
 * Also which statuses count as the target failing (502, 503, 504).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isGatewayFailure, mayRetry, type AttemptFailure, type RequestBody } from '../../proxy/pool/retry-policy.js';

const FAILURES: readonly AttemptFailure[] = ['not-sent', 'sent', 'timeout'];
const BODIES: readonly RequestBody[] = ['none', 'upgrade', 'unread', 'read'];

/**
 * The expected answer, R (retried) or · (not), per method: for each failure in {@link FAILURES}'
 * order, one mark per body in {@link BODIES}' order (none, upgrade, unread, read).
 */
const EXPECTED: Readonly<Record<string, string>> = {
  //         not-sent  sent     timeout
  GET:     'RRR·     R···     ····',
  HEAD:    'RRR·     R···     ····',
  OPTIONS: 'RRR·     R···     ····',
  TRACE:   'RRR·     R···     ····',
  PUT:     'RRR·     R···     ····',
  DELETE:  'RRR·     R···     ····',
  POST:    'RRR·     ····     ····',
  PATCH:   'RRR·     ····     ····',
  CONNECT: 'RRR·     ····     ····',
  get:     'RRR·     ····     ····',
};

/** The table's mark for (`method`, `failure`, `body`). */
function expected(method: string, failure: AttemptFailure, body: RequestBody): boolean {
  const marks = EXPECTED[method]!.replace(/ /g, '');
  const mark = marks[FAILURES.indexOf(failure) * BODIES.length + BODIES.indexOf(body)];
  assert.ok(mark === 'R' || mark === '·', `the table has a mark for ${method} ${failure} ${body}`);
  return mark === 'R';
}

const BODY_WORDS: Readonly<Record<RequestBody, string>> = {
  none: 'no body',
  upgrade: 'an upgrade',
  unread: 'a body not yet read',
  read: 'a body partly read',
};

describe('mayRetry: the table', () => {
  it('covers every method, failure and body', () => {
    for (const marks of Object.values(EXPECTED)) assert.equal(marks.replace(/ /g, '').length, FAILURES.length * BODIES.length);
    assert.equal(Object.keys(EXPECTED).length, 10);
  });

  for (const failure of FAILURES) {
    describe(`an attempt that failed ${failure}`, () => {
      for (const method of Object.keys(EXPECTED)) {
        for (const body of BODIES) {
          const retried = expected(method, failure, body);
          it(`${method} with ${BODY_WORDS[body]}: ${retried ? 'retried' : 'not retried'}`, () => {
            assert.equal(mayRetry(failure, method, body), retried);
          });
        }
      }
    });
  }
});

describe('mayRetry: the rule by its parts', () => {
  it('retries an attempt that never reached its target for any method, even one unknown to it', () => {
    for (const method of ['POST', 'PATCH', 'LOCK', 'PROPFIND', 'M-SEARCH', 'post']) {
      assert.equal(mayRetry('not-sent', method, 'none'), true, method);
      assert.equal(mayRetry('not-sent', method, 'unread'), true, method);
      assert.equal(mayRetry('not-sent', method, 'read'), false, method);
    }
  });

  it('holds methods case-sensitive: only the upper-case spelling of an idempotent method is retried once sent', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']) {
      assert.equal(mayRetry('sent', method, 'none'), true, method);
      for (const spelling of [method.toLowerCase(), method[0] + method.slice(1).toLowerCase(), ` ${method}`, `${method} `]) {
        assert.equal(mayRetry('sent', spelling, 'none'), false, JSON.stringify(spelling));
      }
    }
  });

  it('does not take an unknown method for idempotent once sent', () => {
    for (const method of ['LOCK', 'PROPFIND', 'MKCOL', 'QUERY', '']) assert.equal(mayRetry('sent', method, 'none'), false, JSON.stringify(method));
  });

  it('never retries after a timeout', () => {
    for (const method of ['GET', 'HEAD', 'PUT', 'POST']) for (const body of BODIES) assert.equal(mayRetry('timeout', method, body), false, `${method} ${body}`);
  });
});

describe('isGatewayFailure', () => {
  const CASES: ReadonlyArray<readonly [number, boolean, string]> = [
    [500, false, 'Internal Server Error: the application answered'],
    [501, false, 'Not Implemented: the application answered'],
    [502, true, 'Bad Gateway'],
    [503, true, 'Service Unavailable'],
    [504, true, 'Gateway Timeout'],
    [505, false, 'HTTP Version Not Supported'],
    [429, false, 'Too Many Requests: an answer, not a failure'],
    [200, false, 'OK'],
    [404, false, 'Not Found'],
    [0, false, 'no status'],
  ];
  for (const [status, failure, why] of CASES) {
    it(`${status} ${failure ? 'is' : 'is not'} the target failing (${why})`, () => {
      assert.equal(isGatewayFailure(status), failure);
    });
  }
});
