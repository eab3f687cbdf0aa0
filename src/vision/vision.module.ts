// Vision: the detect/OCR/describe routes over one VisionService, which owns the OCR job queue and the VLM
// provider. The detector and OCR engines it runs are the task models (detection/, ocr/) the composition root
// builds once per process; the model files themselves are prepared by the model registry (inference/).
import type { Module, ModulePart } from '../base/module.js';
import type { Services } from '../services/services.js';
import { VisionService } from './vision.service.js';
import { visionRoutes } from './vision.routes.js';

/** Vision keeps no tables: its usage rows go to the core ledger. */
export const visionPart: ModulePart = { name: 'vision', migrations: [] };

export function visionModule(s: Services): Module & { service: VisionService } {
  const service = new VisionService(s);
  s.models.catalogue.add({ task: 'detect', list: () => service.detectorEntries() });
  s.models.catalogue.add({ task: 'ocr', list: () => service.catalogueEntries().ocr });
  s.models.catalogue.add({ task: 'describe', list: () => service.catalogueEntries().describe });
  return { ...visionPart, service, routes: visionRoutes(service) };
}
