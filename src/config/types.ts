// The configuration types the code reads, each derived from the JSON Schema in schema.ts (one source):
// the validated, env-resolved config with defaults filled and relative paths made absolute.
import type { Static } from 'typebox';
import type * as schema from './schema.js';

export type ServerConfig = Static<typeof schema.serverSchema>;
export type JwtConfig = Static<typeof schema.jwtSchema>;
export type ApiKeyConfig = Static<typeof schema.apiKeySchema>;
export type OperatorEntry = Static<typeof schema.operatorSchema>;
export type AuthConfig = Static<typeof schema.authSchema>;
export type OnStoreUnavailable = Static<typeof schema.onStoreUnavailableSchema>;
export type StoreConfig = Static<typeof schema.storeSchema>;
export type RedisStoreConfig = Exclude<StoreConfig, { kind: 'memory' }>;
export type RedisTlsConfig = Static<typeof schema.redisTlsSchema>;
export type AuditConfig = Static<typeof schema.auditSchema>;
export type AuditChainConfig = Static<typeof schema.auditChainSchema>;
export type AuditCheckpointSinkConfig = Static<typeof schema.auditCheckpointSinkSchema>;
export type EgressConfig = Static<typeof schema.egressSchema>;
export type BuiltinsConfig = Static<typeof schema.builtinsSchema>;
export type ToolOverride = Static<typeof schema.toolOverrideSchema>;
export type HttpToolConfig = Static<typeof schema.httpToolSchema>;
export type ModuleFunctionEntry = Static<typeof schema.moduleFunctionSchema>;
export type HttpFunctionEntry = Static<typeof schema.httpFunctionSchema>;
export type FunctionEntry = ModuleFunctionEntry | HttpFunctionEntry;
export type RagEntry = Static<typeof schema.ragSchema>;
export type OpenApiEntry = Static<typeof schema.openApiSchema>;
export type McpStdioEntry = Static<typeof schema.mcpStdioSchema>;
export type McpRemoteEntry = Static<typeof schema.mcpRemoteSchema>;
export type UpstreamAuthConfig = Static<typeof schema.upstreamAuthSchema>;
export type CredentialsConfig = Static<typeof schema.configSchema>['credentials'];
export type McpLocalEntry = Static<typeof schema.mcpLocalSchema>;
export type McpGlobalEntry = Static<typeof schema.mcpGlobalSchema>;
export type TenantConfig = Static<typeof schema.tenantSchema>;
export type TenancyConfig = Static<typeof schema.configSchema>['tenancy'];
export type McpServerConfig = Static<typeof schema.configSchema>['mcpServer'];

export type GatewayConfig = Static<typeof schema.configSchema> & {
  /** Folder of the config file: relative paths resolve against it. */
  baseDir: string;
  /** Path of the loaded file, or undefined for the embedded demo. */
  source: string | undefined;
};
export type TelemetryConfig = Static<typeof schema.configSchema>['telemetry'];
export type CedarConfig = Static<typeof schema.cedarSchema>;
