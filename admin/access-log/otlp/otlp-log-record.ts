/**
 * One access-log record as an OpenTelemetry log record, in the shape the OTLP serializers of
 * @opentelemetry/otlp-transformer take (sdk-logs' `ReadableLogRecord`). Attribute names follow the
 * OpenTelemetry semantic conventions (HTTP, URL, client, server, user and log attributes);
 * Gatehouse's own are under `gatehouse.`.
 */
import { TraceFlags } from '@opentelemetry/api';
import { SeverityNumber, type LogAttributes } from '@opentelemetry/api-logs';
import { millisToHrTime } from '@opentelemetry/core';
import type { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import type { Resource } from '@opentelemetry/resources';
import type { AccessLogEntry } from '../../../shared/types.js';

/**
 * What `JsonLogsSerializer.serializeRequest` takes one of: sdk-logs' `ReadableLogRecord`, named
 * through the serializer because Gatehouse uses no other part of sdk-logs and does not depend on it.
 */
export type OtlpLogRecord = Parameters<typeof JsonLogsSerializer.serializeRequest>[0][number];

/** One object for every record: the serializer groups records by the identity of their scope. */
const SCOPE = { name: 'gatehouse.access-log' };

/**
 * The methods the HTTP semantic conventions call known (RFC 9110, PATCH of RFC 5789, QUERY);
 * any other is sent as `_OTHER` with the original in `http.request.method_original`, as they
 * require, so that a backend grouping by method sees a bounded set.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', 'QUERY']);

/** Severity number and text pairs (OpenTelemetry logs data model, "Field: SeverityNumber"). */
const INFO = [SeverityNumber.INFO, 'INFO'] as const;
const WARN = [SeverityNumber.WARN, 'WARN'] as const;
const ERROR = [SeverityNumber.ERROR, 'ERROR'] as const;

/**
 * `entry` as a log record of `resource`: its timestamp (epoch ms; OTLP carries ns) as both
 * time and observed time; severity INFO (9) below 400, WARN (13) for 4xx, ERROR (17) from 500; body
 * `"<METHOD> <path with query> <status>"`; attributes `http.request.method`, `url.path`, `url.query`
 * (when the path has a `?`), `http.response.status_code`, `client.address`, `server.address` (the
 * service host the request was routed by, when it was: the HTTP server conventions' name of the
 * server as the request's `Host` named it), `network.protocol.version` (`2` for HTTP/2, else
 * `1.1`: the conventions' value, design.md §4.17), `user.id` (signed-in requests), `gatehouse.service.id`,
 * `gatehouse.service.name` (when `serviceName` is known), `gatehouse.response_time_ms`,
 * `gatehouse.target` (the url of the pool's target that answered, when one did), `gatehouse.count`
 * (how many requests the record stands for: 1, or more for a summary; an int, always there so
 * that a backend can sum it), `gatehouse.path_truncated` (true, only when the path was cut to the
 * stored maximum), `gatehouse.request_id` (the request's id, design.md §3.10, when the record has
 * one) and `log.record.uid` (the eventId, so that a collector can drop the duplicates an
 * at-least-once delivery may send). A traced request's record carries its trace id and server
 * span id as the log record's own `traceId` and `spanId` (hex in OTLP/JSON) with the sampled flag
 * (OpenTelemetry logs data model, "Trace Context Fields"), so a backend links it to the trace.
 * Never throws.
 */
export function toOtlpLogRecord(entry: AccessLogEntry, resource: Resource, serviceName: string | undefined): OtlpLogRecord {
  const time = millisToHrTime(entry.timestamp);
  const query = entry.path.indexOf('?');
  const known = KNOWN_METHODS.has(entry.method);
  const attributes: LogAttributes = {
    'http.request.method': known ? entry.method : '_OTHER',
    'url.path': query === -1 ? entry.path : entry.path.slice(0, query),
    'http.response.status_code': entry.statusCode,
    'client.address': entry.ipAddress,
    'gatehouse.service.id': entry.serviceId,
    'gatehouse.response_time_ms': entry.responseTimeMs,
    'gatehouse.count': entry.count ?? 1,
    'log.record.uid': entry.eventId,
  };
  if (!known) attributes['http.request.method_original'] = entry.method;
  if (query !== -1) attributes['url.query'] = entry.path.slice(query + 1);
  if (entry.host) attributes['server.address'] = entry.host;
  attributes['network.protocol.version'] = entry.protocol === 'h2' ? '2' : '1.1';
  if (entry.userId !== null) attributes['user.id'] = entry.userId;
  if (serviceName !== undefined) attributes['gatehouse.service.name'] = serviceName;
  if (entry.target) attributes['gatehouse.target'] = entry.target;
  if (entry.pathTruncated === true) attributes['gatehouse.path_truncated'] = true;
  if (entry.verify === true) attributes['gatehouse.verify'] = true;
  if (entry.requestId !== undefined) attributes['gatehouse.request_id'] = entry.requestId;
  const [severityNumber, severityText] = severityOf(entry.statusCode);
  return {
    hrTime: time,
    hrTimeObserved: time,
    severityNumber,
    severityText,
    body: `${entry.method} ${entry.path} ${entry.statusCode}`,
    resource,
    instrumentationScope: SCOPE,
    attributes,
    droppedAttributesCount: 0,
    spanContext: entry.traceId !== undefined && entry.spanId !== undefined ? { traceId: entry.traceId, spanId: entry.spanId, traceFlags: TraceFlags.SAMPLED } : undefined,
  };
}

/** The log severity of a response status: a refusal is worth a look (WARN), a failure more (ERROR). */
function severityOf(status: number): readonly [SeverityNumber, string] {
  if (status >= 500) return ERROR;
  return status >= 400 ? WARN : INFO;
}
