// Vision: the detect/OCR/describe routes over one VisionService, which owns the OCR job queue and the VLM
// provider. The detector and OCR models themselves are prepared by the model registry (inference/).
import type { Module, ModulePart } from '../module.js';
import type { Services } from '../services.js';
import { VisionService } from './vision.service.js';
import { visionRoutes } from './vision.routes.js';

/** Vision keeps no tables: its usage rows go to the core ledger. */
export const visionPart: ModulePart = { name: 'vision', migrations: [] };

export function visionModule(s: Services): Module & { service: VisionService } {
  const service = new VisionService(s);
  return { ...visionPart, service, routes: visionRoutes(service) };
}
