// The OpenTelemetry SDK behind tracing.ts, imported only when tracing is configured: a Node tracer
// provider (AsyncLocalStorage context, W3C trace-context propagation) with a batching OTLP/HTTP exporter.
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { context, propagation, trace } from '@opentelemetry/api';
import type { TraceSettings } from './trace-settings.js';
import type { TracingRuntime } from './tracing.js';

const TRACER_NAME = 'toolgate';
const VERSION = '0.1.0';

function samplerFor({ sampler, samplerArg }: TraceSettings): Sampler {
  switch (sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(samplerArg);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(samplerArg) });
  }
}

/** Starts the SDK and registers it as the process's OpenTelemetry globals (a module's own spans join ours). */
export function startTracingSdk(settings: TraceSettings): TracingRuntime {
  const exporterConfig = { url: settings.url, headers: { ...settings.headers } };
  const exporter = settings.protocol === 'http/json' ? new JsonExporter(exporterConfig) : new ProtobufExporter(exporterConfig);
  // OTEL_RESOURCE_ATTRIBUTES first, then the service name the settings chose (env or file).
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: VERSION }));
  const provider = new NodeTracerProvider({ resource, sampler: samplerFor(settings), spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  return {
    tracer: provider.getTracer(TRACER_NAME, VERSION),
    async shutdown() {
      await provider.shutdown();
      // Leave the globals as they were before start: a later start (tests, a restart in-process) registers anew.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
