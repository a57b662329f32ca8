// JSON Schemas of the resources and prompts routes (routes/resources.ts): request validation, response
// serialisation and the OpenAPI document. Entries keep every MCP field the upstream sent.

/** A resource, template, prompt or content entry as MCP defines it, with its namespaced name or URI. */
const mcpEntry = <P extends Record<string, object>>(properties: P, description: string) =>
  ({ type: 'object', description, required: Object.keys(properties), properties, additionalProperties: true }) as const;
const text = { type: 'string' } as const;

export const resourceListResponse = {
  description: "The resources and resource templates of every MCP service the caller may reach, namespaced `toolgate://<scope>/<service>/<upstream URI>`",
  type: 'object',
  required: ['resources', 'resourceTemplates'],
  properties: {
    resources: { type: 'array', items: mcpEntry({ uri: text, name: text }, 'An MCP Resource') },
    resourceTemplates: { type: 'array', items: mcpEntry({ uriTemplate: text, name: text }, 'An MCP ResourceTemplate') },
  },
} as const;

export const resourceReadQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['uri'],
  properties: { uri: { type: 'string', minLength: 1, maxLength: 4096, description: 'A namespaced resource URI from GET /v1/resources (or a resource template filled in)' } },
} as const;

export const resourceReadResponse = {
  description: 'The MCP ReadResourceResult: contents with namespaced URIs, cut to the tenant\'s `resources.maxReadChars` (`_meta["toolgate/truncated"]` says so)',
  type: 'object',
  required: ['contents'],
  properties: {
    contents: { type: 'array', items: mcpEntry({ uri: text }, 'Text (`text`) or binary (`blob`, base64) resource contents') },
    _meta: { type: 'object', additionalProperties: true },
  },
} as const;

export const promptListResponse = {
  description: 'The prompts of every MCP service the caller may reach, named `<scope>/<service>/<upstream name>`',
  type: 'object',
  required: ['prompts'],
  properties: { prompts: { type: 'array', items: mcpEntry({ name: text }, 'An MCP Prompt') } },
} as const;

export const promptGetBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 4096, description: 'A namespaced prompt name from GET /v1/prompts' },
    arguments: { type: 'object', additionalProperties: { type: 'string' }, description: "The prompt's arguments (strings, as MCP defines them)" },
  },
} as const;

export const promptGetResponse = {
  description: "The MCP GetPromptResult, cut to the tenant's `prompts.maxResultChars`; embedded resources carry namespaced URIs",
  type: 'object',
  required: ['messages'],
  properties: {
    description: { type: 'string' },
    messages: { type: 'array', items: mcpEntry({ role: { type: 'string', enum: ['user', 'assistant'] }, content: { type: 'object', additionalProperties: true } }, 'An MCP PromptMessage') },
    _meta: { type: 'object', additionalProperties: true },
  },
} as const;
