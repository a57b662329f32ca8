// The configuration file's JSON Schema (CONTRACT §11). ajv fills defaults, so the validated object
// is a complete GatewayConfig. Unknown keys are refused: a typo must stop start-up, not be ignored.

const stringArray = { type: 'array', items: { type: 'string' } } as const;
const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;
const nameList = { type: 'array', items: { type: 'string', minLength: 1 } } as const;

const toolOverride = {
  type: 'object',
  additionalProperties: false,
  properties: {
    readOnly: { type: 'boolean' },
    destructive: { type: 'boolean' },
    idempotent: { type: 'boolean' },
    concurrencySafe: { type: 'boolean' },
    aliases: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
    deferLoading: { type: 'boolean' },
    searchHint: { type: 'string', maxLength: 200 },
    maxResultChars: { type: 'integer', minimum: 1 },
    timeoutMs: { type: 'integer', minimum: 1 },
    feature: { type: 'string' },
    description: { type: 'string' },
  },
} as const;

const toolName = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;

const httpFunction = {
  type: 'object',
  required: ['name', 'http'],
  additionalProperties: false,
  properties: {
    ...toolOverride.properties,
    name: toolName,
    description: { type: 'string', default: '' },
    inputSchema: { type: 'object', default: { type: 'object', properties: {} } },
    http: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], default: 'POST' },
        url: { type: 'string', pattern: '^https?://' },
        headers: { ...stringMap, default: {} },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 600000, default: 10000 },
      },
    },
  },
} as const;

const moduleFunction = {
  type: 'object',
  required: ['module'],
  additionalProperties: false,
  properties: { module: { type: 'string', minLength: 1 } },
} as const;

const stdioTransport = {
  transport: { const: 'stdio' },
  command: { type: 'string', minLength: 1 },
  args: { ...stringArray, default: [] },
  env: { ...stringMap, default: {} },
  cwd: { type: 'string' },
} as const;

const remoteTransport = {
  transport: { enum: ['streamable-http', 'sse'] },
  url: { type: 'string', pattern: '^https?://' },
  headers: { ...stringMap, default: {} },
} as const;

const serviceId = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,48}$' } as const;

const localMcp = {
  type: 'object',
  required: ['service'],
  oneOf: [
    {
      required: ['module'],
      additionalProperties: false,
      properties: { service: serviceId, lazy: { type: 'boolean' }, required: { type: 'boolean' }, module: { type: 'string' } },
    },
    {
      required: ['transport', 'command'],
      additionalProperties: false,
      properties: { service: serviceId, lazy: { type: 'boolean' }, required: { type: 'boolean' }, ...stdioTransport },
    },
  ],
} as const;

const globalCommon = {
  id: serviceId,
  required: { type: 'boolean', default: false },
  lazy: { type: 'boolean' },
  defer: { type: 'boolean', default: false },
  pin: { type: 'boolean', default: true },
  prefix: { oneOf: [{ type: 'boolean' }, { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$' }] },
  forwardIdentity: { ...stringMap, default: {} },
  timeoutMs: { type: 'integer', minimum: 1 },
} as const;

const globalMcp = {
  type: 'object',
  required: ['id', 'transport'],
  oneOf: [
    { required: ['command'], additionalProperties: false, properties: { ...globalCommon, ...stdioTransport } },
    { required: ['url'], additionalProperties: false, properties: { ...globalCommon, ...remoteTransport } },
  ],
} as const;

const ragEntry = {
  type: 'object',
  required: ['name', 'backend'],
  additionalProperties: false,
  properties: {
    name: toolName,
    description: { type: 'string', default: 'Search the knowledge base' },
    dataset: { type: 'string' },
    backend: {
      type: 'object',
      required: ['kind'],
      oneOf: [
        {
          required: ['documents'],
          additionalProperties: false,
          properties: { kind: { const: 'embedded' }, documents: { type: 'string' } },
        },
        {
          required: ['url'],
          additionalProperties: false,
          properties: {
            kind: { const: 'http' },
            url: { type: 'string', pattern: '^https?://' },
            headers: { ...stringMap, default: {} },
            timeoutMs: { type: 'integer', minimum: 1, default: 10000 },
          },
        },
      ],
    },
    topK: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { default: { type: 'integer', minimum: 1, default: 5 }, max: { type: 'integer', minimum: 1, default: 20 } },
    },
    filter: { type: 'object', default: {} },
    maxResultChars: { type: 'integer', minimum: 1 },
  },
} as const;

// A document is either `spec` (a file) or `url`; load.ts checks that exactly one is given so the
// message names the entry (a oneOf here would only say "must match exactly one schema").
const openapiEntry = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]{0,31}$' },
    spec: { type: 'string', minLength: 1 },
    url: { type: 'string', pattern: '^https?://' },
    baseUrl: { type: 'string', pattern: '^https?://' },
    include: { ...nameList, default: ['*'] },
    exclude: { ...nameList, default: [] },
    headers: { ...stringMap, default: {} },
    timeoutMs: { type: 'integer', minimum: 1, maximum: 600000, default: 10000 },
    maxResultChars: { type: 'integer', minimum: 1 },
    defer: { type: 'boolean' },
  },
} as const;

const tenant = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tools: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { allow: { ...nameList, default: ['*'] }, deny: { ...nameList, default: [] } },
    },
    mcpServices: { ...nameList, default: [] },
    functions: { ...nameList, default: ['*'] },
    builtins: { default: [], oneOf: [{ const: 'all' }, nameList] },
    mode: { enum: ['default', 'readonly'], default: 'default' },
    roles: {
      type: 'object',
      default: {},
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { allow: nameList, deny: nameList },
      },
    },
    bindings: { type: 'object', default: {}, additionalProperties: { type: 'object' } },
    policies: { type: 'object', default: {} },
    limits: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { maxInFlight: { type: 'integer', minimum: 1, default: 64 } },
    },
    deferThreshold: { type: 'integer', minimum: 1 },
    userMcp: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { enabled: { type: 'boolean', default: true }, maxServers: { type: 'integer', minimum: 0, default: 10 } },
    },
    toolsets: {
      type: 'object',
      default: {},
      propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['tools'],
        properties: { description: { type: 'string', default: '' }, tools: nameList },
      },
    },
  },
} as const;

export const configSchema = {
  $id: 'toolgate-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', default: '0.0.0.0' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
        bodyLimit: { type: 'integer', minimum: 1024, default: 1048576 },
        shutdownGraceMs: { type: 'integer', minimum: 0, default: 10000 },
        drainDelayMs: { type: 'integer', minimum: 0, default: 0 },
        maxInFlight: { type: 'integer', minimum: 1, default: 1024 },
        maxPublicInFlight: { type: 'integer', minimum: 1, default: 64 },
        bodyTimeoutMs: { type: 'integer', minimum: 100, maximum: 600000, default: 10000 },
        maxConnectionsPerAddress: { type: 'integer', minimum: 0, default: 256 },
        trustProxy: { type: 'boolean', default: false },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        jwt: {
          type: 'object',
          additionalProperties: false,
          properties: {
            secret: { type: 'string', minLength: 32 },
            publicKey: { type: 'string' },
            jwksUrl: { type: 'string', pattern: '^https?://' },
            algorithms: { type: 'array', items: { enum: ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'] } },
            issuer: { oneOf: [{ type: 'string' }, stringArray] },
            audience: { oneOf: [{ type: 'string' }, stringArray] },
            tenantClaim: { type: 'string', default: 'tenant' },
            rolesClaim: { type: 'string', default: 'roles' },
            clockToleranceSec: { type: 'integer', minimum: 0, maximum: 300, default: 30 },
            requireExp: { type: 'boolean', default: true },
            maxTokenLifetimeSec: { type: 'integer', minimum: 1 },
          },
        },
        apiKeys: {
          type: 'array',
          default: [],
          items: {
            type: 'object',
            required: ['id', 'sha256', 'tenant', 'user'],
            additionalProperties: false,
            properties: {
              id: { type: 'string', minLength: 1 },
              sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
              tenant: { type: 'string', minLength: 1 },
              user: { type: 'string', minLength: 1 },
              roles: { ...stringArray, default: [] },
              claims: { type: 'object' },
            },
          },
        },
        operators: {
          type: 'array',
          default: [],
          items: {
            oneOf: [
              { type: 'object', required: ['apiKey'], additionalProperties: false, properties: { apiKey: { type: 'string', minLength: 1 } } },
              {
                type: 'object',
                required: ['tenant', 'sub'],
                additionalProperties: false,
                properties: { tenant: { type: 'string', minLength: 1 }, sub: { type: 'string', minLength: 1 } },
              },
            ],
          },
        },
        resource: { type: 'string', pattern: '^https?://[^?#]+$', description: "toolgate's public URL as an OAuth protected resource (RFC 9728)" },
        authorizationServers: { type: 'array', items: { type: 'string', pattern: '^https?://' }, default: [] },
        scopesSupported: { ...stringArray, default: [] },
        cache: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            max: { type: 'integer', minimum: 0, default: 10000 },
            ttlMs: { type: 'integer', minimum: 0, default: 60000 },
          },
        },
      },
    },
    store: {
      type: 'object',
      default: { kind: 'memory' },
      required: ['kind'],
      oneOf: [
        { additionalProperties: false, properties: { kind: { const: 'memory' } } },
        {
          additionalProperties: false,
          required: ['url'],
          properties: {
            kind: { const: 'redis' },
            url: { type: 'string', pattern: '^rediss?://' },
            prefix: { type: 'string', default: 'toolgate:' },
            // Rate limits while Redis does not answer: admit calls uncounted, or refuse them (RATE_LIMITED).
            onUnavailable: { enum: ['fail-open', 'fail-closed'], default: 'fail-closed' },
            commandTimeoutMs: { type: 'integer', minimum: 50, maximum: 60000, default: 1000 },
          },
        },
      ],
    },
    audit: {
      type: 'object',
      default: { sink: 'stdout' },
      required: ['sink'],
      oneOf: [
        { additionalProperties: false, properties: { sink: { enum: ['stdout', 'off'] } } },
        { additionalProperties: false, required: ['path'], properties: { sink: { const: 'file' }, path: { type: 'string' } } },
      ],
    },
    features: { type: 'object', default: {}, additionalProperties: { type: 'boolean' } },
    egress: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { allow: { ...stringArray, default: [] } },
    },
    builtins: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        workspaceRoot: { type: 'string', default: './workspaces' },
        perUser: { type: 'boolean', default: false },
        readOnlyRoots: { ...stringArray, default: [] },
        // No default: the built-ins pick bwrap where it is installed, otherwise none.
        sandbox: { enum: ['none', 'bwrap'] },
        allowUnsandboxedShell: { type: 'boolean', default: false },
        limits: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            maxReadChars: { type: 'integer', minimum: 1, default: 12000 },
            commandTimeoutMs: { type: 'integer', minimum: 1, default: 30000 },
            maxOutputBytes: { type: 'integer', minimum: 1, default: 10485760 },
            maxProcesses: { type: 'integer', minimum: 0, default: 8 },
            maxProcessesPerCommand: { type: 'integer', minimum: 1, default: 128 },
            maxFileBytes: { type: 'integer', minimum: 1, default: 10485760 },
          },
        },
      },
    },
    functions: { type: 'array', default: [], items: { oneOf: [moduleFunction, httpFunction] } },
    rag: { type: 'array', default: [], items: ragEntry },
    openapi: { type: 'array', default: [], items: openapiEntry },
    mcp: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        local: { type: 'array', default: [], items: localMcp },
        global: { type: 'array', default: [], items: globalMcp },
      },
    },
    tools: { type: 'object', default: {}, additionalProperties: toolOverride },
    tenants: {
      type: 'object',
      default: {},
      propertyNames: { type: 'string', minLength: 1, maxLength: 128 },
      additionalProperties: tenant,
    },
    logging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { level: { type: 'string', default: 'info' }, redact: { ...stringArray, default: [] } },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 9464 },
        token: { type: 'string', minLength: 16 },
        // Upper bounds in seconds of the call-duration histograms (tool calls, upstream calls), in any order.
        durationBuckets: { type: 'array', minItems: 1, maxItems: 40, uniqueItems: true, items: { type: 'number', exclusiveMinimum: 0, maximum: 86400 } },
      },
    },
    reload: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { watch: { type: 'boolean', default: false } },
    },
    console: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { enabled: { type: 'boolean', default: false } },
    },
    admin: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        auditRecent: { type: 'integer', minimum: 0, maximum: 100000, default: 1000 },
        maxKeysPerTenant: { type: 'integer', minimum: 0, maximum: 10000, default: 100 },
      },
    },
  },
} as const;
