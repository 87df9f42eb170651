import { SAMPLER_NAMES, type SamplerName } from '../tracing/sampler.js';
import { otlpSignalUrl, parseOtlpHeaders } from './otlp-headers.js';
import type { VariableDoc } from './variable-doc.js';

/**
 * Traces (README "Tracing", design.md §3.10): where spans go, which are kept, and whose trace
 * context the gateway continues. Read from the OpenTelemetry SDK's standard variables
 * (specification, "SDK Environment Variables"; exporter.md for OTLP) and the gateway's own.
 */
export interface TracingSettings {
  /** OTEL_TRACES_EXPORTER=otlp: where spans are POSTed (OTLP/HTTP, JSON) and with which headers; undefined: tracing off. */
  export: { url: URL; headers: Record<string, string> } | undefined;
  /** OTEL_TRACES_SAMPLER and its OTEL_TRACES_SAMPLER_ARG (a ratio, 0–1). */
  sampler: { name: SamplerName; ratio: number };
  /** OTEL_SERVICE_NAME; undefined: each process names itself (gatehouse-proxy, gatehouse-admin, gatehouse). */
  serviceName: string | undefined;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (`key=value` pairs, values percent-encoded). */
  resourceAttributes: Record<string, string>;
  /** TRACE_TRUST_INCOMING: continue any client's `traceparent`, not only a trusted proxy's. */
  trustIncoming: boolean;
  /** TRACE_QUERY: record the query string's values in `url.query` (else only its keys). */
  recordQuery: boolean;
}

/** The tracing variables, with their defaults and meanings (the README configuration table). */
export const TRACING_VARIABLES: readonly VariableDoc[] = [
  { name: 'OTEL_TRACES_EXPORTER', default: undefined, meaning: '`otlp`: trace requests and send the spans over OTLP/HTTP (JSON) to the collector (see Tracing). Unset or `none`: no traces, and no span is ever made.' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', default: undefined, meaning: 'Where spans are POSTed, as is; unset: `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`.' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', default: undefined, meaning: 'Headers sent with spans (as `OTEL_EXPORTER_OTLP_HEADERS`, which they replace); never logged.' },
  { name: 'OTEL_TRACES_SAMPLER', default: 'parentbased_traceidratio', meaning: 'Which traces are kept: `always_on`, `always_off`, `traceidratio`, or `parentbased_` of those (a continued trace follows its caller\'s decision).' },
  { name: 'OTEL_TRACES_SAMPLER_ARG', default: '0.01', meaning: 'The ratio of traces kept by the `traceidratio` samplers, 0 to 1 (`0.01`: one request in a hundred).' },
  { name: 'OTEL_SERVICE_NAME', default: undefined, meaning: 'The `service.name` of the spans; unset: `gatehouse-proxy`, `gatehouse-admin`, or `gatehouse` for the embedded process.' },
  { name: 'OTEL_RESOURCE_ATTRIBUTES', default: undefined, meaning: 'More resource attributes of the spans, `key=value` pairs separated by commas, values percent-encoded (`deployment.environment=prod`).' },
  { name: 'TRACE_TRUST_INCOMING', default: 'false', meaning: '`true`: continue the `traceparent` of any client; `false`: only of a `TRUST_PROXY` peer, others start a new trace that links to theirs.' },
  { name: 'TRACE_QUERY', default: 'false', meaning: '`true`: spans record the query string with its values; `false`: only its keys (values may hold secrets).' },
];

const BOOLEAN = new Set(['true', 'false']);

/**
 * The tracing settings `input` (the variables' texts, defaults applied, as loadConfig gathers them)
 * describes. Problems are pushed to `problems` as `<VARIABLE>: <what is wrong>`.
 */
export function readTracingSettings(input: Readonly<Record<string, string | undefined>>, problems: string[]): TracingSettings {
  const exporter = input.OTEL_TRACES_EXPORTER;
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') problems.push('OTEL_TRACES_EXPORTER: must be otlp or none, or unset');
  const name = input.OTEL_TRACES_SAMPLER as SamplerName;
  if (!SAMPLER_NAMES.includes(name)) problems.push(`OTEL_TRACES_SAMPLER: must be one of ${SAMPLER_NAMES.join(', ')}`);
  const ratio = Number(input.OTEL_TRACES_SAMPLER_ARG);
  if (input.OTEL_TRACES_SAMPLER_ARG === '' || !(ratio >= 0 && ratio <= 1)) problems.push('OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1');
  for (const variable of ['TRACE_TRUST_INCOMING', 'TRACE_QUERY']) {
    if (!BOOLEAN.has(input[variable] ?? '')) problems.push(`${variable}: must be true or false`);
  }
  const resourceAttributes = parsed('OTEL_RESOURCE_ATTRIBUTES', input.OTEL_RESOURCE_ATTRIBUTES ?? '', problems) ?? {};
  return {
    export: exporter === 'otlp' ? otlpExport(input, problems) : undefined,
    sampler: { name, ratio },
    serviceName: input.OTEL_SERVICE_NAME,
    resourceAttributes,
    trustIncoming: input.TRACE_TRUST_INCOMING === 'true',
    recordQuery: input.TRACE_QUERY === 'true',
  };
}

function otlpExport(input: Readonly<Record<string, string | undefined>>, problems: string[]): TracingSettings['export'] {
  const headerText = input.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? input.OTEL_EXPORTER_OTLP_HEADERS ?? '';
  const headers = parsed(input.OTEL_EXPORTER_OTLP_TRACES_HEADERS === undefined ? 'OTEL_EXPORTER_OTLP_HEADERS' : 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', headerText, problems);
  try {
    const url = otlpSignalUrl('traces', input.OTEL_EXPORTER_OTLP_ENDPOINT, input.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
    return headers && { url, headers };
  } catch (error) {
    problems.push((error as Error).message);
    return undefined;
  }
}

/** `text` as `key=value` pairs (otlp-headers.ts), or undefined with the problem pushed naming `variable`. */
function parsed(variable: string, text: string, problems: string[]): Record<string, string> | undefined {
  try {
    return parseOtlpHeaders(text);
  } catch (error) {
    problems.push(`${variable}: ${(error as Error).message}`);
    return undefined;
  }
}
