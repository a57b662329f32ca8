// The tenant API's schemas (routes/admin-tenants.ts, docs/api.md#tenants). A tenant's configuration itself is
// checked by the configuration's own schema (src/config/schema.ts, `tenants.<id>`), so its errors name the key
// exactly as a reload would; here it is only an object.

/** Ids a tenant of the store may take: letters, digits, `.`, `_`, `-`, not starting with a dot. */
export const tenantIdParams = {
  type: 'object',
  required: ['tenant'],
  properties: { tenant: { type: 'string', pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$', description: 'The tenant id (case-sensitive)' } },
} as const;

export const tenantConfigBody = {
  type: 'object',
  additionalProperties: true,
  description: 'A tenant configuration: the schema of `tenants.<id>` in the configuration file (docs/configuration.md#tenants); validated by it, errors name the key',
} as const;

export const conditionalHeaders = {
  type: 'object',
  properties: {
    'if-match': { type: 'string', maxLength: 1024, description: 'Write only while the tenant still has one of these ETags (or `*`: exists); else 412' },
    'if-none-match': { type: 'string', maxLength: 1024, description: '`*`: create only (412 when the tenant exists)' },
  },
} as const;

export const tenantDocument = {
  type: 'object',
  required: ['id', 'source', 'config', 'revision', 'updatedAt', 'updatedBy'],
  properties: {
    id: { type: 'string' },
    source: { type: 'string', enum: ['file', 'store'], description: '`file`: from the configuration file, read-only here; `store`: created through this API' },
    config: { type: 'object', additionalProperties: true, description: 'As written (store) or as loaded, defaults filled (file)' },
    revision: { type: ['integer', 'null'], description: 'Counts the writes of a store tenant; null for a file tenant' },
    updatedAt: { type: ['string', 'null'], format: 'date-time' },
    updatedBy: { type: ['string', 'null'], description: '`<tenant>/<user>` of the last writer' },
  },
} as const;

export const tenantListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: { type: 'string', maxLength: 128, description: 'The `next` of the previous page' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 1000 },
    q: { type: 'string', maxLength: 128, description: 'Only ids starting with (or, with `match=substring`, holding) this text' },
    match: { type: 'string', enum: ['prefix', 'substring'], default: 'prefix' },
  },
} as const;

export const tenantList = {
  type: 'object',
  required: ['tenants'],
  properties: {
    tenants: { type: 'array', items: { type: 'string' }, description: 'Tenant ids, file and store alike, in byte order' },
    next: { type: 'string', description: 'Present while there may be more: pass it as `cursor`' },
  },
} as const;
