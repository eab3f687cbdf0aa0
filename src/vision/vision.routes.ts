// POST /v1/vision/describe | ocr | detect (issue 5).
import type { RouteDef } from '../http/route.js';
import type { Services } from '../services.js';

export function visionRoutes(_s: Services): RouteDef[] {
  return [];
}
