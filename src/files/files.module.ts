// File serving as a part: GET /v1/files/* answers presigned blob links (the signature is the credential).
// Resolving a link to a blob range is the store's (file-serving.ts); the routes only adapt it to HTTP.
import type { Module, ModulePart } from '../base/module.js';
import type { Services } from '../services/services.js';
import { fileRoutes } from './file.routes.js';

/** No tables: blobs live in the data dir's blob store. */
export const filesPart: ModulePart = { name: 'files', migrations: [] };

export function filesModule(s: Services): Module {
  return { ...filesPart, routes: fileRoutes(s) };
}
