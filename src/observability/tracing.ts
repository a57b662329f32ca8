// OpenTelemetry traces (docs/architecture.md#observability): the one small interface the rest of the code
// calls. The SDK (provider, exporter, sampler) lives in tracing-sdk.ts and is imported only when tracing
// is configured; until then `isTracing()` is false and no caller builds a span, a context or a header.
// Only the API package is loaded here: with no SDK registered it does nothing.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type TimeInput, type Tracer } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import type { UpstreamCredential } from '../call/upstream-credential.js';
import type { TraceSettings } from './trace-settings.js';

export type { Context as TraceContext } from '@opentelemetry/api';

// GenAI and MCP attribute names (semantic conventions still in development): copied, as the
// OpenTelemetry JS guidance says for unstable conventions, rather than imported from the incubating entry.
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const ATTR_NETWORK_TRANSPORT = 'network.transport';
export const ATTR_ERROR_TYPE = 'error.type';

/** toolgate's own attributes (never argument values, bound values, tokens or other caller text). */
export const ATTR_TENANT = 'toolgate.tenant';
export const ATTR_SOURCE = 'toolgate.tool.source';
export const ATTR_OUTCOME = 'toolgate.outcome';
export const ATTR_POLICY = 'toolgate.policy';
export const ATTR_DECISION = 'toolgate.decision';
/** The approval a call waits for (pending) or runs under (approved): it joins the request and the run. */
export const ATTR_APPROVAL_ID = 'toolgate.approval.id';
/** Which attempt of a call a retry span is (2 for the first retry). */
export const ATTR_RETRY_ATTEMPT = 'toolgate.retry.attempt';
/** The upstream a client span calls: an MCP service id, or `http:<host>` of a webhook or retrieval service. */
export const ATTR_UPSTREAM = 'toolgate.upstream';
/** Which upstream identity a call carried (`service`, `user`, `exchanged`) and its token's SHA-256 prefix, never the token. */
export const ATTR_CREDENTIAL_KIND = 'toolgate.upstream.credential.kind';
export const ATTR_CREDENTIAL_HASH = 'toolgate.upstream.credential.token_hash';

/** What tracing-sdk.ts hands back once the SDK runs. */
export interface TracingRuntime {
  tracer: Tracer;
  /** Exports what is buffered, then stops the SDK. */
  shutdown(): Promise<void>;
}

let active: TracingRuntime | undefined;

/** The one check every traced place makes first: false unless the SDK runs. */
export function isTracing(): boolean {
  return active !== undefined;
}

export interface TracingHandle {
  /** Exports the spans still buffered and stops the SDK (the app's onClose). */
  close(): Promise<void>;
}

/**
 * Starts the SDK for these settings (from trace-settings.ts), or does nothing for undefined. One SDK per
 * process: traces are a process-wide setting, like the OpenTelemetry globals they register.
 */
export async function startTracing(settings: TraceSettings | undefined): Promise<TracingHandle | undefined> {
  if (settings === undefined) return undefined;
  if (active !== undefined) throw new Error('OpenTelemetry tracing is already running in this process');
  const { startTracingSdk } = await import('./tracing-sdk.js');
  const runtime = startTracingSdk(settings);
  active = runtime;
  return {
    close: async () => {
      if (active === runtime) active = undefined;
      await runtime.shutdown();
    },
  };
}

function tracer(): Tracer {
  if (active === undefined) throw new Error('tracing is off');
  return active.tracer;
}

/** Header names and values to read W3C trace context from (Fastify's request.headers). */
export type IncomingHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The server span of one HTTP request. `continueFrom` holds the caller's headers only when the caller
 * authenticated: an anonymous caller cannot join (or steer the sampling of) a trace.
 */
export function startServerSpan(name: string, attributes: Attributes, startTime: TimeInput, continueFrom: IncomingHeaders | undefined): Context {
  const parent = continueFrom === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, continueFrom);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes, startTime }, parent);
  return trace.setSpan(parent, span);
}

/** Ends the span a context holds (once), with attributes known at the end. */
export function endSpan(ctx: Context, attributes: Attributes, failed: boolean): void {
  const span = trace.getSpan(ctx);
  if (span === undefined || !span.isRecording()) return;
  span.setAttributes(attributes);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The trace and span id a context holds, for log lines and audit events; undefined without a valid span. */
export function traceIds(ctx: Context | undefined): { traceId: string; spanId: string } | undefined {
  const span = ctx === undefined ? undefined : trace.getSpan(ctx);
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { traceId, spanId } : undefined;
}

/** A span another span links to, as stored (an approval keeps the span of the call that asked for it). */
export interface SpanLinkTarget {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** The span running now as a link target, or undefined when tracing is off or no span is current. */
export function activeSpanLink(): SpanLinkTarget | undefined {
  if (active === undefined) return undefined;
  const span = trace.getSpan(context.active());
  if (span === undefined || !trace.isSpanContextValid(span.spanContext())) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { traceId, spanId, traceFlags };
}

/** The trace id of the span running now (audit events written inside a call), or undefined. */
export function activeTraceId(): string | undefined {
  return active === undefined ? undefined : traceIds(context.active())?.traceId;
}

/** The Cedar decision of the call running now, on its span when tracing is on: the determining policy ids (docs/governance.md#cedar-explained). */
export function recordCedarDecision(decision: 'allow' | 'deny', policies: readonly string[]): void {
  if (active !== undefined) trace.getActiveSpan()?.setAttributes({ 'toolgate.cedar.decision': decision, 'toolgate.cedar.policies': policies.join(',') });
}

/**
 * What a call's trace and span say of the upstream credential it carried (docs/security-model.md#upstream-identity):
 * its kind and hash prefix, set on the span running now (the call's own) when tracing is on. Never the token.
 */
export function recordCredential(credential: Pick<UpstreamCredential, 'kind' | 'tokenHash'>): CredentialRecord {
  if (active !== undefined) trace.getActiveSpan()?.setAttributes({ [ATTR_CREDENTIAL_KIND]: credential.kind, [ATTR_CREDENTIAL_HASH]: credential.tokenHash });
  const record = { kind: credential.kind, tokenHash: credential.tokenHash };
  madeRecords.add(record);
  return record;
}

/** What a call's trace and audit event say of the credential it carried: its kind and a hash prefix. */
export interface CredentialRecord {
  kind: UpstreamCredential['kind'];
  tokenHash: string;
}

// The records recordCredential made. An upstream's result rides in the same trace and may carry a look-alike
// `credential` of its own; only these objects are believed (docs/security-model.md#upstream-identity).
const madeRecords = new WeakSet<object>();

/** Whether `value` is a record recordCredential made in this process (never one parsed from an upstream's answer). */
export function isMadeCredentialRecord(value: unknown): value is CredentialRecord {
  return typeof value === 'object' && value !== null && madeRecords.has(value);
}

/** The context current now while tracing is on (spans started under it nest under the running span), else undefined. */
export function activeTraceContext(): Context | undefined {
  return active === undefined ? undefined : context.active();
}

/** A thrown error's kind for `error.type`: a ToolError's errorType, else the class name (never its message). */
function errorTypeName(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'errorType' in error && typeof error.errorType === 'string') return error.errorType;
  return error instanceof Error ? error.name : 'Error';
}

/**
 * Runs `work` inside a new span under `parent` (the active context when undefined): the span is current
 * while `work` runs, so the spans and headers of everything it calls belong to it. `finish` names what is
 * known only at the end.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context; links?: Link[] },
  work: (span: Span) => Promise<T>,
  finish: (result: T) => { attributes?: Attributes; failed: boolean },
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  return context.with(trace.setSpan(parent, span), () => work(span)).then(
    (result) => {
      const { attributes, failed } = finish(result);
      if (attributes) span.setAttributes(attributes);
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      return result;
    },
    (error: unknown) => {
      span.setAttribute(ATTR_ERROR_TYPE, errorTypeName(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    },
  );
}

/**
 * A client span around one upstream hop, under `parent` (default: the active context); `work` gets the W3C
 * headers (traceparent, tracestate) to send.
 */
export function clientSpan<T>(
  name: string,
  attributes: Attributes,
  work: (headers: Record<string, string>, span: Span) => Promise<T>,
  failed: (result: T) => boolean = () => false,
  parent?: Context,
): Promise<T> {
  return inSpan(
    name,
    { kind: SpanKind.CLIENT, attributes, ...(parent === undefined ? {} : { parent }) },
    (span) => {
      const headers: Record<string, string> = {};
      propagation.inject(context.active(), headers);
      return work(headers, span);
    },
    (result) => ({ failed: failed(result) }),
  );
}

/** The attributes of an HTTP client span to `url`: method, host, port, upstream; never the path or query. */
export function httpClientAttributes(method: string, url: URL): Attributes {
  return {
    [ATTR_HTTP_REQUEST_METHOD]: method,
    [ATTR_SERVER_ADDRESS]: url.hostname,
    ...(url.port ? { [ATTR_SERVER_PORT]: Number(url.port) } : {}),
    [ATTR_UPSTREAM]: `http:${url.host}`,
  };
}

/** Decisions that let a call go on (or park it); any other decision (an errorType) refused it. */
const NOT_REFUSALS = new Set(['pending_approval', 'approved']);

/**
 * A policy's decision as a span of its own under the current call (rate-limit refusal, approval parked,
 * access denied, timeout), or under `parent`: from `startTime` (default now) to now.
 */
export function recordDecision(policy: string, decision: string, startTime?: TimeInput, parent?: Context): void {
  const options = { attributes: { [ATTR_POLICY]: policy, [ATTR_DECISION]: decision }, ...(startTime === undefined ? {} : { startTime }) };
  const span = tracer().startSpan(`policy ${policy}`, options, parent ?? context.active());
  if (!NOT_REFUSALS.has(decision)) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
