import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../shared/errors.js';
import { parsePagination } from '../../admin/http/pagination.js';

const parse = (query: string) => parsePagination(new URLSearchParams(query));

function assertBadRequest(query: string, message: string, fields: Record<string, string>): void {
  assert.throws(
    () => parse(query),
    (error) => {
      assert.ok(error instanceof GatewayError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'BAD_REQUEST');
      assert.equal(error.message, message);
      assert.deepEqual(error.fields, fields);
      return true;
    },
  );
}

describe('parsePagination', () => {
  it('defaults to limit 100, offset 0', () => {
    assert.deepEqual(parse(''), { limit: 100, offset: 0 });
  });

  it('accepts the bounds and plain integers', () => {
    assert.deepEqual(parse('limit=1&offset=0'), { limit: 1, offset: 0 });
    assert.deepEqual(parse('limit=1000&offset=123456'), { limit: 1000, offset: 123456 });
    assert.deepEqual(parse('limit=25'), { limit: 25, offset: 0 });
    assert.deepEqual(parse('offset=7'), { limit: 100, offset: 7 });
  });

  for (const bad of ['1.5', 'abc', '-1', '0', '1001', '', '1e3', '+5', ' 5', '0x10', '99999999999999999999']) {
    it(`rejects limit=${JSON.stringify(bad)}`, () => {
      assertBadRequest(`limit=${encodeURIComponent(bad)}`, 'limit must be an integer from 1 to 1000', {
        limit: 'must be an integer from 1 to 1000',
      });
    });
  }

  for (const bad of ['1.5', 'abc', '-1', '', '1e3', '99999999999999999999']) {
    it(`rejects offset=${JSON.stringify(bad)}`, () => {
      assertBadRequest(`offset=${encodeURIComponent(bad)}`, 'offset must be an integer of 0 or more', {
        offset: 'must be an integer of 0 or more',
      });
    });
  }

  it('names both parameters when both are bad', () => {
    assertBadRequest(
      'limit=0&offset=-1',
      'limit must be an integer from 1 to 1000; offset must be an integer of 0 or more',
      { limit: 'must be an integer from 1 to 1000', offset: 'must be an integer of 0 or more' },
    );
  });
});
