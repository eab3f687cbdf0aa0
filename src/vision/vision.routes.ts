// POST /v1/vision/describe | ocr | detect (docs/vision.md, "Endpoints"): thin adapters. The body is validated by
// the route's schema, the use case runs in VisionService (vision.service.ts), the result is the JSON answer.
// The image may also come as multipart/form-data or a raw image body (imageUpload, http/image-upload.ts).
import type { RequestContext, RouteDef } from '../http/route.js';
import { callerOf, defineRoute } from '../http/route.js';
import {
  DescribeBody,
  DescribeResult,
  DetectBody,
  DetectResult,
  OcrBody,
  OcrResult as OcrResultSchema,
} from './schemas.js';
import type { VisionService } from './vision.service.js';

/**
 * What the routes call: the service itself in `serve`, or a front process's link to it (http/fronts), which
 * answers the same three calls from the owner of the models.
 */
export type VisionPort = Pick<VisionService, 'detect' | 'ocr' | 'describe'> & { vlm: { model: string } | null };

export function visionRoutes(vision: VisionPort): RouteDef[] {
  const vlm = vision.vlm;
  const tags = ['vision'];
  const errorsDoc = {
    400: { description: 'Invalid request, image input or image (invalid_request_error)' },
    413: { description: 'Image over 20 MB (payload_too_large)' },
    503: { description: 'Inference queue full (overloaded_error, Retry-After)' },
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/vision/detect',
      auth: 'key',
      tags,
      body: DetectBody,
      imageUpload: true,
      summary: 'Detect objects (COCO classes) with boxes in source-image pixels',
      responses: { 200: { description: 'Detected objects', schema: DetectResult }, ...errorsDoc },
      handler: async (ctx: RequestContext<DetectBody>) => ({ json: await vision.detect(callerOf(ctx), ctx.body) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/vision/ocr',
      auth: 'key',
      tags,
      body: OcrBody,
      imageUpload: true,
      summary: 'Extract text: full text in reading order and line blocks with boxes',
      responses: { 200: { description: 'Text and blocks', schema: OcrResultSchema }, ...errorsDoc },
      handler: async (ctx: RequestContext<OcrBody>) => ({ json: await vision.ocr(callerOf(ctx), ctx.body) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/vision/describe',
      auth: 'key',
      tags,
      body: DescribeBody,
      imageUpload: true,
      summary: vlm
        ? `Describe an image (VLM ${vlm.model})`
        : 'Describe an image in English or Chinese (built-in describer)',
      responses: {
        200: { description: 'Description', schema: DescribeResult },
        ...errorsDoc,
        502: { description: 'The configured VLM provider failed (api_error, vlm_provider_error)' },
      },
      handler: async (ctx: RequestContext<DescribeBody>) => ({ json: await vision.describe(callerOf(ctx), ctx.body) }),
    }),
  ];
}
