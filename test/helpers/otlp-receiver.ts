// A real OTLP/HTTP trace receiver on loopback: accepts POST /v1/traces in http/json and http/protobuf
// (decoded with protobufjs against the OTLP schema in test/fixtures/otlp/trace.proto) and keeps every span.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { packageRoot } from '../../src/config/demo.js';

export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  serviceName: AttributeValue;
  statusCode: number;
  /** The spans this span links to (e.g. an approved run to the call that asked for approval). */
  links: Array<{ traceId: string; spanId: string }>;
}

export interface OtlpReceiver {
  /** Base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): spans arrive at `<endpoint>/v1/traces`. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received, in order. */
  contentTypes: string[];
  /** Paths of the requests received. */
  paths: string[];
  /** Resolves once `match` holds for the spans received (polls every 20 ms, at most `timeoutMs`). */
  waitFor(match: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const requestType = protobuf
  .parse(readFileSync(join(packageRoot(), 'test/fixtures/otlp/trace.proto'), 'utf8'))
  .root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

interface KeyValue {
  key: string;
  value?: Record<string, unknown>;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  status?: { code?: number };
  links?: Array<{ traceId: string; spanId: string }>;
}

interface OtlpRequest {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

function scalar(value: Record<string, unknown> | undefined): AttributeValue {
  if (!value) return null;
  for (const key of ['stringValue', 'boolValue', 'doubleValue']) if (key in value) return value[key] as AttributeValue;
  if ('intValue' in value) return Number(value.intValue);
  return JSON.stringify(value);
}

function attributesOf(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, scalar(entry.value)]));
}

function spansOf(request: OtlpRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? null;
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          serviceName,
          statusCode: span.status?.code ?? 0,
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
        });
      }
    }
  }
  return spans;
}

const hex = (base64: string | undefined): string => Buffer.from(base64 ?? '', 'base64').toString('hex');

/** http/protobuf: ids are bytes (base64 from toObject), shown as lowercase hex as in http/json. */
function decodeProtobuf(body: Buffer): OtlpRequest {
  const request = requestType.toObject(requestType.decode(body), { longs: String, bytes: String, defaults: false }) as OtlpRequest;
  for (const resourceSpans of request.resourceSpans ?? []) {
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        const links = (span.links ?? []).map((link) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) }));
        Object.assign(span, { traceId: hex(span.traceId), spanId: hex(span.spanId), parentSpanId: hex(span.parentSpanId), links });
      }
    }
  }
  return request;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const type = String(req.headers['content-type'] ?? '');
      paths.push(req.url ?? '');
      contentTypes.push(type);
      try {
        const request = type.includes('protobuf') ? decodeProtobuf(body) : (JSON.parse(body.toString('utf8')) as OtlpRequest);
        spans.push(...spansOf(request));
      } catch (error) {
        res.statusCode = 400;
        res.end(String(error));
        return;
      }
      res.setHeader('content-type', type.includes('protobuf') ? 'application/x-protobuf' : 'application/json');
      res.end(type.includes('protobuf') ? Buffer.alloc(0) : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    paths,
    async waitFor(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (let round = 0; round < 1000 && Date.now() < deadline; round++) {
        if (match(spans)) return spans;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`spans did not arrive within ${timeoutMs} ms; received: ${spans.map((span) => span.name).join(', ')}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
