/**
 * W3C Trace Context (Recommendation, 2021-11-23): the `traceparent` and `tracestate` fields, read
 * strictly and written in version 00. A field that breaks the grammar is treated as absent (§3.2.2,
 * §3.3.1): never continued, never forwarded.
 */

/** A parsed `traceparent` (§3.2): ids as lowercase hex, and whether the caller recorded the trace. */
export interface TraceParent {
  /** 32 lowercase hex characters, not all zero (§3.2.2.3). */
  traceId: string;
  /** The caller's span: 16 lowercase hex characters, not all zero (§3.2.2.4). */
  spanId: string;
  /** The `sampled` flag (§3.2.2.5.1). */
  sampled: boolean;
}

const VERSION_00_LENGTH = 55;
const HEX = /^[0-9a-f]+$/;
const ALL_ZERO = /^0+$/;

/**
 * `value` read as a `traceparent` (§3.2.2), or undefined when it is none. Version 00 must be
 * exactly 55 characters; a higher version (not `ff`) is read by its version-00 prefix when
 * followed by `-` or nothing (§3.2.4: forward compatibility).
 */
export function parseTraceParent(value: string | undefined): TraceParent | undefined {
  if (value === undefined || value.length < VERSION_00_LENGTH) return undefined;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? value.length !== VERSION_00_LENGTH : value.length > VERSION_00_LENGTH && value[VERSION_00_LENGTH] !== '-') return undefined;
  if (value[2] !== '-' || value[35] !== '-' || value[52] !== '-') return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  const flags = value.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags) || ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The version-00 `traceparent` for a span (§3.2). */
export function formatTraceParent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** At most this many list members (§3.3.1.1). */
const MAX_MEMBERS = 32;
/** Longest `tracestate` kept, in characters (§3.3.1.1: at least 512 must be propagated). */
const MAX_LENGTH = 512;
/** A list member (§3.3.1.3): a simple key or a multi-tenant `tenant@system` key, `=`, a value of printable ASCII but `,` and `=`, not ending in a space. */
const MEMBER = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * `value` as a `tracestate` to pass on (§3.3): its members with the optional whitespace around them
 * removed, or undefined when it breaks the grammar, repeats a key, has more than 32 members or is
 * longer than 512 characters (then dropped whole: a vendor's state is never half forwarded).
 */
export function parseTraceState(value: string | undefined): string | undefined {
  if (value === undefined || value.length > MAX_LENGTH) return undefined;
  const members = value.split(',').map((member) => member.trim()).filter((member) => member !== '');
  if (members.length === 0 || members.length > MAX_MEMBERS) return undefined;
  const keys = new Set<string>();
  for (const member of members) {
    if (!MEMBER.test(member)) return undefined;
    const key = member.slice(0, member.indexOf('='));
    if (keys.has(key)) return undefined;
    keys.add(key);
  }
  return members.join(',');
}
