import { describe, expect, it } from 'vitest';
import { traceSettings, TraceSettingsError } from '../../../src/observability/trace-settings.js';
import { testConfig } from '../../helpers/build.js';

const telemetry = (raw: Record<string, unknown> = {}) => testConfig({ telemetry: raw }).telemetry;

describe('traceSettings', () => {
  it('is off without an endpoint in the file or the environment', () => {
    expect(traceSettings(telemetry(), {})).toBeUndefined();
  });

  it('posts to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces, http/protobuf by default, service toolgate', () => {
    expect(traceSettings(telemetry(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'toolgate',
      sampler: 'parentbased_always_on',
      samplerArg: 1,
      headers: {},
    });
  });

  it('takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, over the base endpoint', () => {
    expect(traceSettings(telemetry(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' })?.url).toBe('http://b:4318/custom');
  });

  it('reads the telemetry block, and every OTEL_* variable overrides its key', () => {
    const file = telemetry({ endpoint: 'http://collector:4318', protocol: 'http/json', serviceName: 'gw', sampler: 'traceidratio', samplerArg: 0.5, headers: { 'x-key': 'k' } });
    expect(traceSettings(file, {})).toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/json', serviceName: 'gw', sampler: 'traceidratio', samplerArg: 0.5, headers: { 'x-key': 'k' } });
    expect(
      traceSettings(file, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'from-env',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toMatchObject({ url: 'http://env:4318/v1/traces', protocol: 'http/protobuf', serviceName: 'from-env', sampler: 'parentbased_traceidratio', samplerArg: 0.25 });
  });

  it('is off with OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none or enabled: false, whatever the endpoint', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(traceSettings(telemetry(), { ...env, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(traceSettings(telemetry(), { ...env, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(traceSettings(telemetry({ enabled: false }), env)).toBeUndefined();
    expect(traceSettings(telemetry(), { ...env, OTEL_SDK_DISABLED: 'false' })).toBeDefined();
  });

  it('refuses an unsupported protocol, sampler or sampler argument, naming it', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(() => traceSettings(telemetry(), { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(TraceSettingsError);
    expect(() => traceSettings(telemetry(), { ...env, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => traceSettings(telemetry(), { ...env, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });

  it('refuses a telemetry key the schema does not know', () => {
    expect(() => telemetry({ endpiont: 'http://x' })).toThrow(/endpiont/);
  });
});
