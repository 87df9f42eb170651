import type { Http2Session, SecureServerOptions, ServerHttp2Stream, ServerOptions } from 'node:http2';
import { MAX_HEADER_FIELDS } from './request-head.js';

/** RST_STREAM's NO_ERROR (RFC 9113 §7): a stream that closed normally. */
const NO_ERROR = 0;

/**
 * Streams one client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2).
 * Browsers open at most about 100 (Chromium's limit is 100, Firefox's too); 128 leaves them room
 * and keeps what one connection can ask of the gateway within the 100–250 peers at the edge use
 * (nginx 128, Envoy 100, Caddy 250). A HEADERS beyond it is refused with RST_STREAM REFUSED_STREAM.
 */
export const MAX_CONCURRENT_STREAMS = 128;

/**
 * Bytes of one request's header list (SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2: names and
 * values uncompressed, plus 32 octets per field): what node:http's 16 KiB request head
 * (`maxHeaderSize`'s default) allows, with the 32 octets of each of the {@link MAX_HEADER_FIELDS}
 * fields and the four pseudo-header fields added, so a head HTTP/1.1 takes is taken over h2 too.
 * A larger one gets RST_STREAM (ENHANCE_YOUR_CALM) from node:http2, never reaching the pipeline.
 */
export const MAX_HEADER_LIST_SIZE = 16 * 1024 + 32 * (MAX_HEADER_FIELDS + 4);

/**
 * Header fields of one request node:http2 keeps (`maxHeaderListPairs`, pseudo-header fields
 * counted): one above the pipeline's limit plus the four pseudo-header fields, so that a request
 * over {@link MAX_HEADER_FIELDS} reaches the request-head check and gets its 431 as over HTTP/1.1
 * (request-head.ts), and one with more still is reset by node:http2.
 */
const MAX_HEADER_LIST_PAIRS = MAX_HEADER_FIELDS + 1 + 4;

/**
 * A stream's initial flow-control window (SETTINGS_INITIAL_WINDOW_SIZE, RFC 9113 §6.9.2): the
 * protocol's default, 65,535 bytes. node:http2 opens the connection's window as data arrives and a
 * stream's only as the pipeline reads it, so what a client can make the gateway hold for a target
 * that reads slowly is this window per stream: 8 MiB at {@link MAX_CONCURRENT_STREAMS}.
 */
export const INITIAL_WINDOW_SIZE = 65_535;

/**
 * The connection's receive window (RFC 9113 §6.9.1), opened at the session's start: 1 MiB, so
 * that several streams uploading at once are not held to one 64 KiB window per round trip.
 */
export const CONNECTION_WINDOW_SIZE = 1024 * 1024;

/**
 * The HTTP/2 options of the public listener (design.md §4.17), over TLS (ALPN `h2`) and cleartext
 * (H2C prior knowledge) alike. Every bound node:http2 keeps against a hostile peer is stated, its
 * default where that is right:
 * - `maxSessionMemory` 10 (MB): a session whose buffered frames and headers pass it gets new
 *   streams refused (ENHANCE_YOUR_CALM) until it drains;
 * - `maxSettings` 32 settings in one SETTINGS frame, `maxOutstandingPings` 10 pings of ours
 *   unanswered; nghttp2 ends a session with over 1,000 SETTINGS or PING acknowledgements queued
 *   (a SETTINGS or PING flood, CVE-2019-9515, CVE-2019-9512);
 * - `maxSessionInvalidFrames` 1,000 invalid frames and `maxSessionRejectedStreams` 100 streams
 *   refused: past either the session is closed (ENHANCE_YOUR_CALM). Node ≥ 20.8 also counts
 *   streams the client resets right after opening them (rapid reset, CVE-2023-44487) and ends the
 *   session past its limit; nghttp2 ≥ 1.61 (Node ≥ 20.12.2) bounds CONTINUATION frames (CVE-2024-27983);
 * - `enablePush` false: the gateway never pushes (RFC 9113 §8.4).
 */
export const HTTP2_OPTIONS: ServerOptions = {
  maxSessionMemory: 10,
  maxSettings: 32,
  maxOutstandingPings: 10,
  maxSessionInvalidFrames: 1000,
  maxSessionRejectedStreams: 100,
  maxHeaderListPairs: MAX_HEADER_LIST_PAIRS,
  settings: {
    maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
    maxHeaderListSize: MAX_HEADER_LIST_SIZE,
    initialWindowSize: INITIAL_WINDOW_SIZE,
    enablePush: false,
  },
};

/** {@link HTTP2_OPTIONS} for `http2.createSecureServer`, which also answers HTTP/1.1 clients (ALPN `http/1.1`, or none). */
export const HTTP2_SECURE_OPTIONS: SecureServerOptions = { ...HTTP2_OPTIONS, allowHTTP1: true };

/**
 * Streams a session must have opened before its resets are judged, and the share of them reset by
 * the client before their answer that ends it: Envoy's rule against rapid reset
 * (`premature_reset_total_stream_count` 500, more than half), which browsers cancelling requests
 * as a page changes do not come near.
 */
const PREMATURE_RESETS = { minStreams: 500, share: 0.5 } as const;

/**
 * Ends `session` (destroying its socket) once more than half of at least
 * {@link PREMATURE_RESETS}' 500 streams it opened were reset (rapid reset, CVE-2023-44487: the
 * client resets each stream as soon as it opened it). nghttp2 answers such a burst with GOAWAY by
 * itself but leaves the socket open until the idle timeout, which a client that keeps writing
 * never reaches. A stream counts as reset when it closes with an error code (`rstCode`, the
 * client's CANCEL): node:http2 runs the pipeline between frames, so a quick answer may already be
 * written when the client's RST_STREAM arrives, and 'aborted' alone would miss it.
 * @returns a listener for the session's 'stream' event.
 */
export function prematureResetGuard(session: Http2Session): (stream: ServerHttp2Stream) => void {
  let opened = 0;
  let reset = 0;
  function onClose(this: ServerHttp2Stream): void {
    if (this.rstCode === NO_ERROR) return;
    reset++;
    if (opened >= PREMATURE_RESETS.minStreams && reset > opened * PREMATURE_RESETS.share) session.destroy();
  }
  return (stream) => {
    opened++;
    stream.once('close', onClose);
  };
}

/**
 * Opens a new session's connection window to {@link CONNECTION_WINDOW_SIZE} (a server's session is
 * connected when node:http2 emits it). Errors need nothing here: node:http2 gives every server
 * session an 'error' listener (re-emitted as the server's 'sessionError') and the compatibility
 * API every request's stream one, so a peer's protocol error, a reset or a flood ends its session
 * or stream, never the process.
 */
export function openConnectionWindow(session: Http2Session): void {
  if (!session.destroyed) session.setLocalWindowSize(CONNECTION_WINDOW_SIZE);
}
