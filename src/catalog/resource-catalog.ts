// Resources and prompts of the MCP services a caller may reach, aggregated and namespaced
// (docs/architecture.md#resources-and-prompts). One module for both wires: the MCP handlers
// (serve-resources.ts) and the REST routes (routes/resources.ts) call these functions.
import { catalogAdmits } from '../cedar/catalog-gate.js';
import type { CedarEngine } from '../cedar/engine.js';
import type {
  ContentBlock,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { TenantConfig } from '../config/types.js';
import type { McpService, McpServiceClient as Client } from '../registry/tool-provider.js';
import type { Logger } from '../call/types.js';
import { ATTR_MCP_METHOD_NAME, ATTR_UPSTREAM, clientSpan, type TraceContext } from '../observability/tracing.js';
import { compileAllowDeny, globSubject, namespacedName, namespacedUri, parseName, parseUri, type Matcher } from './namespace.js';
import { omitted, SizeBudget } from './size-budget.js';
import { CatalogNotFound, CatalogUpstreamError } from './resource-catalog-errors.js';
import { admit, audited, type CatalogCaller, type CatalogKind } from './resource-catalog-governance.js';
import { collectPages, type Page } from '../shared/pages.js';

/** Pages of one upstream listing, and entries kept per service: a server that pages forever cannot hold a listing hostage. */
export const MAX_LIST_PAGES = 20;
export const MAX_ENTRIES_PER_SERVICE = 1000;
/** Per upstream request; the caller's own cancellation (client gone) ends it earlier. */
export const UPSTREAM_TIMEOUT_MS = 15_000;
/** A longer URI or name is answered as unknown without being parsed or matched. */
const MAX_NAME_CHARS = 4096;

/** The services a caller may reach, with its tenant's configuration (Gateway.mcpServicesFor). */
export type ReachableServices = () => Promise<{ tenant: { config: TenantConfig; cedar?: CedarEngine | undefined }; services: readonly McpService[] }>;

export interface CatalogRequest {
  reachable: ReachableServices;
  log: Logger;
  /** The caller's request span while tracing is on: each upstream request is a client span under it. */
  trace?: TraceContext;
  /** The request's cancellation: ends every upstream request it started. */
  signal?: AbortSignal;
  /** Who asks: reads and gets are audited and rate-limited for them (resource-catalog-governance.ts). */
  caller: CatalogCaller;
}

export { CatalogNotFound, CatalogRateLimited, CatalogUpstreamError } from './resource-catalog-errors.js';

const echo = (value: string): string => (value.length > 200 ? `${value.slice(0, 200)}…` : value);

interface TenantRules {
  resources: Matcher;
  prompts: Matcher;
}
// Compiled once per tenant config object (a reload makes new ones).
const rulesByConfig = new WeakMap<TenantConfig, TenantRules>();
function rulesOf(config: TenantConfig): TenantRules {
  let rules = rulesByConfig.get(config);
  if (!rules) rulesByConfig.set(config, (rules = { resources: compileAllowDeny(config.resources), prompts: compileAllowDeny(config.prompts) }));
  return rules;
}

/** The connected client of a service that declares the capability, or undefined. */
async function clientWith(service: McpService, capability: 'resources' | 'prompts'): Promise<Client | undefined> {
  const client = await service.client();
  return client?.getServerCapabilities()?.[capability] ? client : undefined;
}

const listPaged = <T>(page: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> =>
  collectPages(page, { maxPages: MAX_LIST_PAGES, maxItems: MAX_ENTRIES_PER_SERVICE });

/** Every reachable service's entries, in service order; a service that fails is left out (and logged), never the whole list. */
async function aggregate<T>(request: CatalogRequest, capability: 'resources' | 'prompts', list: (client: Client, service: McpService) => Promise<T[]>): Promise<{ items: T[]; rules: TenantRules }> {
  const { tenant, services } = await request.reachable();
  const perService = await Promise.all(
    services.map(async (service) => {
      try {
        const client = await clientWith(service, capability);
        return client ? await list(client, service) : [];
      } catch (error) {
        request.log.warn({ scope: service.scope, service: service.scope === 'user' ? undefined : service.service, err: describe(error) }, `MCP ${capability} listing failed`);
        return [];
      }
    }),
  );
  const rules = rulesOf(tenant.config);
  // The tenant's Cedar policies narrow what its globs admit (src/cedar/catalog-gate.ts).
  const { cedar } = tenant;
  if (!cedar) return { items: perService.flat(), rules };
  const principal = request.caller.principal;
  return {
    items: perService.flat(),
    rules: { resources: (name) => rules.resources(name) && catalogAdmits(cedar, principal, 'resource', name), prompts: (name) => rules.prompts(name) && catalogAdmits(cedar, principal, 'prompt', name) },
  };
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const options = (request: CatalogRequest) => ({ timeout: UPSTREAM_TIMEOUT_MS, ...(request.signal ? { signal: request.signal } : {}) });

type TraceMeta = Readonly<Record<string, string>> | undefined;

/**
 * One request to an upstream MCP service. While tracing, it is a client span under the caller's request,
 * and `send` puts the trace (traceparent, tracestate) in its params' `_meta`, as for tools/call.
 */
function hop<T>(request: CatalogRequest, service: McpService, method: string, send: (meta: TraceMeta) => Promise<T>): Promise<T> {
  if (request.trace === undefined) return send(undefined);
  // A user's own service is named by its scope only: its key holds the user's id.
  const attributes = { [ATTR_MCP_METHOD_NAME]: method, [ATTR_UPSTREAM]: service.scope === 'user' ? 'user' : service.service };
  return clientSpan(`${method}`, attributes, send, undefined, request.trace);
}

/** Params with the trace's `_meta` when there is one. */
function traced<P extends object>(params: P, meta: TraceMeta): P | (P & { _meta: Record<string, string> }) {
  return meta === undefined ? params : { ...params, _meta: { ...meta } };
}

/** A listing page's params: the cursor and the trace's `_meta`, or none. */
function pageParams(cursor: string | undefined, meta: TraceMeta): { cursor?: string; _meta?: Record<string, string> } | undefined {
  return cursor === undefined && meta === undefined ? undefined : traced(cursor === undefined ? {} : { cursor }, meta);
}

export async function listResources(request: CatalogRequest): Promise<Resource[]> {
  const { items, rules } = await aggregate(request, 'resources', async (client, source) => {
    const { scope, service } = source;
    const listed = await listPaged(async (cursor) => {
      const page = await hop(request, source, 'resources/list', (meta) => client.listResources(pageParams(cursor || undefined, meta), options(request)));
      return { items: page.resources, nextCursor: page.nextCursor };
    });
    return listed.map((resource) => ({ ...resource, uri: namespacedUri(scope, service, resource.uri), name: namespacedName(scope, service, resource.name) }));
  });
  return items.filter((resource) => rules.resources(globSubject(resource.uri)));
}

export async function listResourceTemplates(request: CatalogRequest): Promise<ResourceTemplate[]> {
  const { items, rules } = await aggregate(request, 'resources', async (client, source) => {
    const { scope, service } = source;
    const listed = await listPaged(async (cursor) => {
      const page = await hop(request, source, 'resources/templates/list', (meta) => client.listResourceTemplates(pageParams(cursor || undefined, meta), options(request)));
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    });
    return listed.map((template) => ({ ...template, uriTemplate: namespacedUri(scope, service, template.uriTemplate), name: namespacedName(scope, service, template.name) }));
  });
  return items.filter((template) => rules.resources(globSubject(template.uriTemplate)));
}

export async function listPrompts(request: CatalogRequest): Promise<Prompt[]> {
  const { items, rules } = await aggregate(request, 'prompts', async (client, source) => {
    const { scope, service } = source;
    const listed = await listPaged(async (cursor) => {
      const page = await hop(request, source, 'prompts/list', (meta) => client.listPrompts(pageParams(cursor || undefined, meta), options(request)));
      return { items: page.prompts, nextCursor: page.nextCursor };
    });
    return listed.map((prompt) => ({ ...prompt, name: namespacedName(scope, service, prompt.name) }));
  });
  return items.filter((prompt) => rules.prompts(prompt.name));
}

/**
 * The owning service of a namespaced name, only among those the caller reaches and only when the tenant's
 * globs admit the name; anything else is CatalogNotFound before any upstream is asked.
 */
async function owner(request: CatalogRequest, kind: CatalogKind, name: string, resolved: (service: string) => void): Promise<{ service: McpService; upstream: string; config: TenantConfig }> {
  const parsed = name.length > MAX_NAME_CHARS ? undefined : kind === 'resource' ? parseUri(name) : parseName(name);
  const { tenant, services } = await request.reachable();
  const service = parsed && services.find((candidate) => candidate.scope === parsed.scope && candidate.service === parsed.service);
  if (!parsed || !service) throw new CatalogNotFound(`unknown ${kind}: ${echo(name)}`);
  resolved(`${service.scope}/${service.service}`);
  const rules = rulesOf(tenant.config);
  // The same answer as unknown; only the audit log tells the tenant's own deny apart.
  if (!(kind === 'resource' ? rules.resources(globSubject(name)) : rules.prompts(name))) throw new CatalogNotFound(`unknown ${kind}: ${echo(name)}`, 'denied');
  if (!catalogAdmits(tenant.cedar, request.caller.principal, kind, kind === 'resource' ? globSubject(name) : name)) throw new CatalogNotFound(`unknown ${kind}: ${echo(name)}`, 'denied');
  return { service, upstream: parsed.upstream, config: tenant.config };
}

/**
 * The owner's connected client, once the read or get is audited as the service's and admitted by the
 * tenant's rate limit: a refused one never connects to, or asks, the upstream.
 */
async function governedOwner(request: CatalogRequest, kind: CatalogKind, name: string, resolved: (service: string) => void): Promise<{ client: Client; service: McpService; upstream: string; config: TenantConfig }> {
  const found = await owner(request, kind, name, resolved);
  const { scope, service } = found.service;
  await admit(request.caller, found.config, kind);
  const client = await clientWith(found.service, kind === 'resource' ? 'resources' : 'prompts');
  if (!client) throw new CatalogUpstreamError(`MCP service ${scope}/${service} is unavailable`);
  return { ...found, client };
}

async function upstreamCall<T>(service: McpService, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new CatalogUpstreamError(`MCP service ${service.scope}/${service.service}: ${echo(describe(error))}`, { cause: error });
  }
}

type ResourceContents = ReadResourceResult['contents'][number];

function boundedContents(contents: ResourceContents, budget: SizeBudget, uri: (upstream: string) => string): ResourceContents {
  const named = { ...contents, uri: uri(contents.uri) };
  if ('text' in named && typeof named.text === 'string') return { ...named, text: budget.text(named.text) };
  if ('blob' in named && typeof named.blob === 'string' && !budget.fits(named.blob)) {
    const { blob, ...rest } = named;
    return { ...rest, text: omitted('blob', named.mimeType, blob.length) };
  }
  return named;
}

const truncatedMeta = (result: { _meta?: Record<string, unknown> | undefined }, budget: SizeBudget) =>
  budget.truncated ? { _meta: { ...result._meta, 'toolgate/truncated': true } } : {};

/** resources/read routed to the owning service only; contents carry namespaced URIs and fit `resources.maxReadChars`. */
export function readResource(request: CatalogRequest, uri: string): Promise<ReadResourceResult> {
  return audited(request.caller, 'resource', uri, undefined, async (resolved) => {
    const { client, service, upstream, config } = await governedOwner(request, 'resource', uri, resolved);
    const result = await upstreamCall(service, () => hop(request, service, 'resources/read', (meta) => client.readResource(traced({ uri: upstream }, meta), options(request))));
    const budget = new SizeBudget(config.resources.maxReadChars);
    const contents = result.contents.map((item) => boundedContents(item, budget, (own) => namespacedUri(service.scope, service.service, own)));
    return { ...result, contents, ...truncatedMeta(result, budget) };
  });
}

function boundedBlock(block: ContentBlock, budget: SizeBudget, service: McpService): ContentBlock {
  const uri = (own: string): string => namespacedUri(service.scope, service.service, own);
  switch (block.type) {
    case 'text':
      return { ...block, text: budget.text(block.text) };
    case 'image':
    case 'audio':
      return budget.fits(block.data) ? block : { type: 'text', text: omitted(block.type, block.mimeType, block.data.length) };
    case 'resource':
      return { ...block, resource: boundedContents(block.resource, budget, uri) };
    case 'resource_link':
      return { ...block, uri: uri(block.uri) };
    default:
      return block;
  }
}

/** prompts/get routed to the owning service only; embedded resources carry namespaced URIs; the messages fit `prompts.maxResultChars`. */
export function getPrompt(request: CatalogRequest, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
  return audited(request.caller, 'prompt', name, args, async (resolved) => {
    const { client, service, upstream, config } = await governedOwner(request, 'prompt', name, resolved);
    const result = await upstreamCall(service, () =>
      hop(request, service, 'prompts/get', (meta) => client.getPrompt(traced({ name: upstream, ...(args ? { arguments: args } : {}) }, meta), options(request))),
    );
    const budget = new SizeBudget(config.prompts.maxResultChars);
    const messages = result.messages.map((message) => ({ ...message, content: boundedBlock(message.content, budget, service) }));
    return { ...result, messages, ...truncatedMeta(result, budget) };
  });
}
