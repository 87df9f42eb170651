/**
 * W3C Trace Context (Recommendation, 2021-11-23) as shared/tracing/trace-context.ts reads and writes
 * it: the Recommendation's own examples, and every malformed form of §3.2.2 (`traceparent`) and
 * §3.3.1 (`tracestate`) read as absent, so that the gateway never continues nor forwards it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTraceParent, parseTraceParent, parseTraceState } from '../../shared/tracing/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const traceParent = (version = '00', trace = TRACE, span = SPAN, flags = '01') => `${version}-${trace}-${span}-${flags}`;

describe('traceparent (§3.2)', () => {
  it('reads the Recommendation\'s examples: sampled and not', () => {
    assert.deepEqual(parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), { traceId: TRACE, spanId: SPAN, sampled: true });
    assert.deepEqual(parseTraceParent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'), { traceId: TRACE, spanId: SPAN, sampled: false });
  });

  it('reads the sampled flag alone among the flags (§3.2.2.5: other bits are not the gateway\'s to interpret)', () => {
    assert.equal(parseTraceParent(traceParent('00', TRACE, SPAN, '03'))?.sampled, true);
    assert.equal(parseTraceParent(traceParent('00', TRACE, SPAN, '02'))?.sampled, false);
    assert.equal(parseTraceParent(traceParent('00', TRACE, SPAN, 'ff'))?.sampled, true);
  });

  it('reads a future version by its version-00 prefix, with or without more fields after a dash (§3.2.4)', () => {
    assert.deepEqual(parseTraceParent(traceParent('01')), { traceId: TRACE, spanId: SPAN, sampled: true });
    assert.deepEqual(parseTraceParent(`${traceParent('cc')}-what-the-future-will-be-like`), { traceId: TRACE, spanId: SPAN, sampled: true });
    assert.equal(parseTraceParent(`${traceParent('cc')}x`), undefined, 'a longer field not separated by a dash');
  });

  const malformed: Record<string, string | undefined> = {
    absent: undefined,
    empty: '',
    'version ff (§3.2.2.1: invalid)': traceParent('ff'),
    'version 00 with more fields': `${traceParent()}-extra`,
    'version 00 one character longer': `${traceParent()}0`,
    'an uppercase version': traceParent('0A'),
    'a version of one digit': traceParent('0'),
    'uppercase hex in the trace id': traceParent('00', TRACE.toUpperCase()),
    'uppercase hex in the span id': traceParent('00', TRACE, 'ABCDEF0123456789'),
    'uppercase hex in the flags': traceParent('00', TRACE, SPAN, '0A'),
    'a trace id of 31 digits': traceParent('00', TRACE.slice(1)),
    'a trace id of 33 digits': traceParent('00', `${TRACE}0`),
    'a span id of 15 digits': traceParent('00', TRACE, SPAN.slice(1)),
    'a span id of 17 digits': traceParent('00', TRACE, `${SPAN}0`),
    'flags of one digit': traceParent('00', TRACE, SPAN, '1'),
    'flags of three digits': traceParent('00', TRACE, SPAN, '001'),
    'an all-zero trace id (§3.2.2.3)': traceParent('00', '0'.repeat(32)),
    'an all-zero span id (§3.2.2.4)': traceParent('00', TRACE, '0'.repeat(16)),
    'a non-hex character': traceParent('00', `${TRACE.slice(0, 31)}g`),
    'non-hex flags': traceParent('00', TRACE, SPAN, '0x'),
    'other separators': traceParent().replaceAll('-', '_'),
    'spaces around it': ` ${traceParent()} `,
    'a future version with a malformed trace id': `${traceParent('01', TRACE.toUpperCase())}-more`,
  };
  for (const [form, value] of Object.entries(malformed)) {
    it(`reads ${form} as no traceparent`, () => {
      assert.equal(parseTraceParent(value), undefined, String(value));
    });
  }

  it('writes version 00 with the sampled flag, which it reads back', () => {
    assert.equal(formatTraceParent(TRACE, SPAN, true), `00-${TRACE}-${SPAN}-01`);
    assert.equal(formatTraceParent(TRACE, SPAN, false), `00-${TRACE}-${SPAN}-00`);
    for (const sampled of [true, false]) assert.deepEqual(parseTraceParent(formatTraceParent(TRACE, SPAN, sampled)), { traceId: TRACE, spanId: SPAN, sampled });
  });
});

describe('tracestate (§3.3)', () => {
  /** `count` distinct members `k<i>=v`. */
  const members = (count: number) => Array.from({ length: count }, (_, i) => `k${i}=v`).join(',');

  it('keeps the Recommendation\'s examples, simple and multi-tenant keys', () => {
    assert.equal(parseTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(parseTraceState('fw529a3039@dt=ZmY3Y2U4,congo=lZWRzIHRoNhcm5hbCBwbGVhc3VyZS4'), 'fw529a3039@dt=ZmY3Y2U4,congo=lZWRzIHRoNhcm5hbCBwbGVhc3VyZS4');
    assert.equal(parseTraceState('1tenant@sys_1=x'), '1tenant@sys_1=x', 'a tenant id may start with a digit');
    assert.equal(parseTraceState('a=b c'), 'a=b c', 'a value may hold a space, not end in one');
  });

  it('drops the optional whitespace around members and empty members (§3.3.1.2)', () => {
    assert.equal(parseTraceState(' rojo=1 ,\tcongo=2\t'), 'rojo=1,congo=2');
    assert.equal(parseTraceState('rojo=1,,congo=2,'), 'rojo=1,congo=2');
  });

  it('keeps 32 members and 512 characters; more is dropped whole (§3.3.1.1)', () => {
    assert.equal(parseTraceState(members(32)), members(32));
    assert.equal(parseTraceState(members(33)), undefined);
    const long = `a=${'x'.repeat(255)},b=${'y'.repeat(252)}`;
    assert.equal(long.length, 512);
    assert.equal(parseTraceState(long), long);
    assert.equal(parseTraceState(`${long}z`), undefined);
  });

  const malformed: Record<string, string | undefined> = {
    absent: undefined,
    'only commas': ',, ,',
    'a repeated key': 'rojo=1,congo=2,rojo=3',
    'an uppercase key': 'Rojo=1',
    'a simple key starting with a digit': '1rojo=1',
    'a key of 257 characters': `k${'x'.repeat(256)}=1`,
    'a system id of 15 characters': `tenant@s${'x'.repeat(14)}=1`,
    'a tenant id of 242 characters': `t${'x'.repeat(241)}@sys=1`,
    'a key with a character outside its set': 'ro.jo=1',
    'an empty value': 'rojo=',
    'a value holding =': 'rojo=a=b',
    'a value of 257 characters': `rojo=${'x'.repeat(257)}`,
    'a value beyond ASCII': 'rojo=é',
    'a member without =': 'rojo',
    'one bad member among good ones': 'rojo=1,Congo=2',
  };
  for (const [form, value] of Object.entries(malformed)) {
    it(`reads ${form} as no tracestate`, () => {
      assert.equal(parseTraceState(value), undefined, String(value));
    });
  }
});
