// The fixed part of the OpenAPI document; paths come from the route schemas.
export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'toolgate',
    version: '0.1.0',
    description: 'Tool gateway for AI agents: which tools a model may see, and governed execution of its tool calls.',
    // The LICENSE file's (package.json says the same; test/packaging.test.ts checks all three agree).
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  // Relative: the gateway that serves this document, whatever its host and port (a fixed URL was wrong
  // on every other port, and one built from the Host header would echo what the caller sent).
  servers: [{ url: '/', description: 'The gateway serving this document' }],
  tags: [
    { name: 'tools', description: 'Exposure: the caller\'s tool pool' },
    { name: 'execute', description: 'Execution through the policy stack' },
    { name: 'resources', description: 'Resources and prompts of the MCP services the caller may reach' },
    { name: 'approvals', description: 'Human approval of tool calls' },
    { name: 'usage', description: 'Budgets: what callers have used and have left' },
    { name: 'users', description: "A user's own MCP servers" },
    { name: 'admin', description: 'Operator routes (role admin)' },
    { name: 'operations', description: 'Health, readiness, metrics' },
  ],
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http' as const, scheme: 'bearer', description: 'A JWT or a static API key' },
    },
  },
};
