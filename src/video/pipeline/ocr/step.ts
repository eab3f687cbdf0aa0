// The ocr step: reads the region of each target its `when` selects and sets `text` (possibly ''). With no
// producing step before it, it reads the whole frame and adds one target of class `text` per line, tracked
// too; that is decided by the order of steps, not per frame, so a frame where an earlier detect found nothing
// gets no OCR at all.
import { z } from 'zod';
import { errors } from '../../../base/errors.js';
import { expected, When } from '../step-schema.js';
import { defineStep } from '../step.js';
import { clampBox, selects, type FrameRun } from '../frame-step.js';
import { TargetTracker } from '../target-tracker.js';

/** OCR models an ocr step may name (as POST /v1/vision/ocr's `model`). */
export const OCR_STEP_MODELS: readonly string[] = ['pp-ocrv4'];

export const ocrStep = defineStep({
  name: 'ocr',
  schema: z.strictObject({
    model: z.literal('ocr'),
    parameters: z
      .strictObject({
        model: z
          .string(expected('an ocr model id string', 'parameters.model'))
          .max(200)
          .optional()
          .meta({ description: 'OCR model id (GET /v1/models, task ocr); default pp-ocrv4' }),
        language: z
          .string(expected('a language code string such as "auto", "en" or "zh"', 'parameters.language'))
          .max(32)
          .optional()
          .meta({ description: 'Default auto' }),
      })
      .optional(),
    when: When.optional(),
  }),
  parameters: ['model', 'language'],
  plan({ index, params, when, afterProducer }) {
    if (params.model !== undefined && (typeof params.model !== 'string' || !OCR_STEP_MODELS.includes(params.model))) {
      throw errors.unknownModel(`steps[${index}].parameters.model`, params.model, 'ocr', OCR_STEP_MODELS);
    }
    const language = params.language ?? 'auto';
    if (typeof language !== 'string')
      throw errors.invalidParam(
        `steps[${index}].parameters.language`,
        `Expected a language code string for steps[${index}].parameters.language`,
      );
    const filter = when();
    const frameLevel = !afterProducer;
    return {
      kind: 'ocr',
      index,
      produces: frameLevel,
      open(task) {
        if (frameLevel) {
          const tracker = new TargetTracker(task.tracking, index, task.ids, 0);
          const run: FrameRun = async (frame, targets) => {
            const r = await task.models.ocrImage(frame.image, { language, priority: task.priority });
            const candidates = r.blocks.map((b) => ({
              box: clampBox(b.bbox, frame.width, frame.height),
              score: b.confidence,
              cls: 'text',
              text: b.text,
            }));
            for (const { candidate, trackId } of tracker.assign(candidates, frame.index)) {
              targets.push({
                trackId,
                class: 'text',
                confidence: candidate.score,
                box: [...candidate.box],
                text: candidate.text,
              });
            }
          };
          return { frame: run, snapshot: () => tracker.snapshot(), restore: (s) => tracker.restore(s) };
        }
        return async (frame, targets) => {
          for (const t of targets) {
            if (!selects(filter, t)) continue;
            frame.signal?.throwIfAborted();
            t.text = (await task.models.ocrRegion(frame.image, t.box, { language, priority: task.priority })).text;
          }
        };
      },
    };
  },
  addToTarget(t, out) {
    if (t.text !== undefined) out.text = t.text;
  },
});
