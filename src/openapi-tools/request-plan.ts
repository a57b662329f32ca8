// One operation → the model-visible input schema and the plan that turns arguments back into an HTTP
// request: every path, query and header parameter is a top-level argument (so tenant bindings such
// as `owner: ${claims.org}` work on them like on any tool), the JSON request body is `body`.
import type { JsonObject } from '../call/types.js';
import { asString, defineOwn, isObject, type HttpMethod, type MediaTypeObject, type ParameterObject } from './document.js';
import type { SchemaConverter } from './json-schema.js';
import type { Operation, SkipReason } from './operations.js';

export type ParameterIn = 'path' | 'query' | 'header';

export interface ParameterPlan {
  /** The argument name the model sees (sanitised, unique within the operation). */
  key: string;
  in: ParameterIn;
  /** The name on the wire. */
  name: string;
  style: string;
  explode: boolean;
  /** Declared with `content` instead of `schema`: the value is sent as JSON text. */
  json: boolean;
}

export interface RequestPlan {
  method: HttpMethod;
  pathTemplate: string;
  parameters: ParameterPlan[];
  body?: { key: string; mediaType: string; kind: 'json' | 'text' };
}

export type PlannedOperation = { ok: true; inputSchema: JsonObject; plan: RequestPlan } | { ok: false; reason: SkipReason };

/**
 * Header parameters never taken from the model: the three OpenAPI says to ignore (Accept,
 * Content-Type, Authorization), hop-by-hop and framing headers, and the gateway's own.
 */
const RESERVED_HEADERS = new Set([
  'accept', 'content-type', 'authorization', 'cookie', 'host', 'content-length', 'connection', 'transfer-encoding', 'te',
  'upgrade', 'keep-alive', 'trailer', 'proxy-authorization', 'x-toolgate-depth', 'x-request-id', 'traceparent', 'tracestate',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BODY_KEY = 'body';

const sanitizeKey = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'param';

function uniqueKey(wanted: string, location: string, taken: Set<string>): string {
  let key = sanitizeKey(wanted);
  if (taken.has(key)) key = sanitizeKey(`${location}_${wanted}`);
  for (let suffix = 2; taken.has(key); suffix += 1) key = `${sanitizeKey(`${location}_${wanted}`).slice(0, 60)}_${suffix}`;
  taken.add(key);
  return key;
}

function withDescription(schema: JsonObject, description: unknown): JsonObject {
  const text = asString(description)?.trim();
  return text && schema.description === undefined ? { ...schema, description: text } : schema;
}

// JSON first (exact, then any +json or a wildcard), then text; anything else (multipart, binary) is unsupported.
function chooseBody(content: Record<string, MediaTypeObject>): { mediaType: string; kind: 'json' | 'text'; schema: unknown } | undefined {
  const types = Object.keys(content);
  const pick = (test: (type: string) => boolean) => types.find((type) => test(type.toLowerCase().split(';')[0]!.trim()));
  const json = pick((type) => type === 'application/json') ?? pick((type) => type.endsWith('+json') || type.endsWith('/json') || type === '*/*');
  if (json) return { mediaType: json === '*/*' ? 'application/json' : json, kind: 'json', schema: content[json]?.schema };
  const text = pick((type) => type.startsWith('text/'));
  if (text) return { mediaType: text, kind: 'text', schema: { type: 'string' } };
  return undefined;
}

function parameterSchema(parameter: ParameterObject, convert: SchemaConverter): { schema: JsonObject; json: boolean } {
  if (parameter.schema !== undefined) return { schema: convert.convert(parameter.schema), json: false };
  if (isObject(parameter.content)) {
    const first = Object.values(parameter.content)[0];
    return { schema: convert.convert(isObject(first) ? first.schema : undefined), json: true };
  }
  return { schema: { type: 'string' }, json: false };
}

export function planOperation(operation: Operation, convert: SchemaConverter, configuredHeaders: ReadonlySet<string>): PlannedOperation {
  const properties: JsonObject = {};
  const required: string[] = [];
  const taken = new Set<string>();
  const parameters: ParameterPlan[] = [];

  const body = operation.operation.requestBody;
  let bodyPlan: RequestPlan['body'];
  let bodySchema: JsonObject | undefined;
  if (isObject(body) && isObject(body.content) && Object.keys(body.content).length > 0) {
    const chosen = chooseBody(body.content as Record<string, MediaTypeObject>);
    if (chosen) {
      taken.add(BODY_KEY);
      bodyPlan = { key: BODY_KEY, mediaType: chosen.mediaType, kind: chosen.kind };
      bodySchema = withDescription(convert.convert(chosen.schema), body.description);
    } else if (body.required === true) {
      return { ok: false, reason: 'unsupported request body' };
    }
  }

  const declared = new Set<string>();
  const locations: ParameterIn[] = ['path', 'query', 'header'];
  for (const location of locations) {
    for (const parameter of operation.parameters) {
      const name = asString(parameter.name);
      if (parameter.in !== location || !name) continue;
      if (location === 'path') declared.add(name);
      if (location === 'header' && (RESERVED_HEADERS.has(name.toLowerCase()) || configuredHeaders.has(name.toLowerCase()) || !HEADER_NAME.test(name))) continue;
      const key = uniqueKey(name, location, taken);
      const { schema, json } = parameterSchema(parameter, convert);
      defineOwn(properties, key, withDescription(schema, parameter.description));
      if (location === 'path' || parameter.required === true) required.push(key);
      const style = asString(parameter.style) ?? (location === 'query' ? 'form' : 'simple');
      const explode = typeof parameter.explode === 'boolean' ? parameter.explode : style === 'form';
      parameters.push({ key, in: location, name, style, explode, json });
    }
  }
  if (operation.parameters.some((parameter) => parameter.in === 'cookie' && parameter.required === true)) {
    return { ok: false, reason: 'required cookie parameter' };
  }
  // A template variable the document forgot to declare is still a required string.
  for (const match of operation.path.matchAll(/\{([^}]+)\}/g)) {
    const name = match[1]!;
    if (declared.has(name)) continue;
    declared.add(name);
    const key = uniqueKey(name, 'path', taken);
    defineOwn(properties, key, { type: 'string' });
    required.push(key);
    parameters.push({ key, in: 'path', name, style: 'simple', explode: false, json: false });
  }
  if (bodyPlan && bodySchema) {
    properties[BODY_KEY] = bodySchema;
    if (body?.required === true) required.push(BODY_KEY);
  }
  const inputSchema: JsonObject = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;
  return { ok: true, inputSchema, plan: { method: operation.method, pathTemplate: operation.path, parameters, ...(bodyPlan ? { body: bodyPlan } : {}) } };
}
