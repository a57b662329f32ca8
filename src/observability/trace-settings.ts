// Whether and where toolgate exports traces: the `telemetry` config block, overridden by the standard
// OpenTelemetry environment variables (docs/configuration.md#telemetry). Pure, so it is tested alone.
import { TRACE_SAMPLERS } from '../config/schema.js';
import type { TelemetryConfig } from '../config/types.js';
import { ConfigError } from '../config/interpolate.js';

export type TraceSampler = (typeof TRACE_SAMPLERS)[number];
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Everything the SDK is started with; undefined from `traceSettings` means tracing is off. */
export interface TraceSettings {
  /** The full URL spans are posted to. */
  url: string;
  protocol: OtlpProtocol;
  serviceName: string;
  sampler: TraceSampler;
  samplerArg: number;
  headers: Readonly<Record<string, string>>;
}

const isSampler = (value: string): value is TraceSampler => (TRACE_SAMPLERS as readonly string[]).includes(value);

/** The OTLP/HTTP signal path appended to a base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT semantics). */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** A non-empty value of an environment variable, else undefined (an empty variable counts as unset). */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value.length === 0 ? undefined : value;
}

/** A bad OTEL_* value or telemetry key: a configuration error (exit 78 at start-up, like a bad config key). */
export class TraceSettingsError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'TraceSettingsError';
  }
}

/**
 * The tracing settings, or undefined when tracing is off: off unless a traces endpoint is configured (file
 * or environment), and off whenever OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none or `enabled: false`.
 * A bad value in an OTEL_* variable throws (named), as a bad config key does.
 */
export function traceSettings(config: TelemetryConfig, env: NodeJS.ProcessEnv): TraceSettings | undefined {
  if (envValue(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || config.enabled === false) return undefined;
  if (envValue(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return undefined;
  const tracesEndpoint = envValue(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = envValue(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  // A signal-specific endpoint is used as is; a base endpoint gets /v1/traces (the OTLP exporter spec).
  // Environment first, then the file, each with its traces endpoint before its base endpoint.
  const url =
    tracesEndpoint ?? (endpoint !== undefined ? tracesUrl(endpoint) : undefined) ?? config.tracesEndpoint ?? (config.endpoint !== undefined ? tracesUrl(config.endpoint) : undefined);
  if (url === undefined) return undefined;
  if (!/^https?:\/\//.test(url)) throw new TraceSettingsError(`the OTLP traces endpoint must be an http(s) URL: ${url}`);

  const protocol = envValue(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? envValue(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? config.protocol;
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TraceSettingsError(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not supported (http/protobuf or http/json)`);
  }
  const sampler = envValue(env, 'OTEL_TRACES_SAMPLER') ?? config.sampler;
  if (!isSampler(sampler)) throw new TraceSettingsError(`OTEL_TRACES_SAMPLER ${sampler} is not supported (${TRACE_SAMPLERS.join(', ')})`);
  const rawArg = envValue(env, 'OTEL_TRACES_SAMPLER_ARG');
  const samplerArg = rawArg === undefined ? config.samplerArg : Number(rawArg);
  if (!Number.isFinite(samplerArg) || samplerArg < 0 || samplerArg > 1) throw new TraceSettingsError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1: ${rawArg}`);
  return {
    url,
    protocol,
    serviceName: envValue(env, 'OTEL_SERVICE_NAME') ?? config.serviceName,
    sampler,
    samplerArg,
    headers: config.headers,
  };
}
