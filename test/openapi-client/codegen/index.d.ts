export { astToString, default as openapiTS } from 'openapi-typescript';
