// Re-exported from here so that openapi-typescript resolves the TypeScript 5 installed beside it.
export { astToString, default as openapiTS } from 'openapi-typescript';
