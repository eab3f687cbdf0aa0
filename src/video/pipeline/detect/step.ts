// The detect step: adds a target for each of its detector's detections of the requested classes at or above
// confidence_threshold (default 0.5, as for POST /v1/vision/detect), each with a track id from this step's
// tracker (target-tracker.ts). Its `when` has nothing to select (it does not change existing targets) and is
// ignored. The detector (parameters.model, default the built-in) is loaded before the request is checked, so
// its labels check `classes`.
import { z } from 'zod';
import { errors } from '../../../base/errors.js';
import type { Detector } from '../../../detection/detect.js';
import { expected, names, unit, When } from '../step-schema.js';
import { defineStep } from '../step.js';
import { clampBox, unitNumber, type FrameRun } from '../frame-step.js';
import { candidateFloor, TargetTracker, type Candidate } from '../target-tracker.js';
import { colourSignature, SIGNATURE_DIM } from '../../../media/colour-signature.js';

/** Default detect confidence_threshold, as for POST /v1/vision/detect. */
export const DEFAULT_CONFIDENCE = 0.5;

/** A detect step's `parameters.model` (undefined: the default detector); a non-string is a 400. */
export function detectStepModel(i: number, params: Record<string, unknown> | undefined | null): string | undefined {
  const m = params?.model;
  if (m === undefined || m === null) return undefined;
  if (typeof m !== 'string')
    throw errors.invalidParam(
      `steps[${i}].parameters.model`,
      `Expected a detect model id string for steps[${i}].parameters.model`,
    );
  return m;
}

function classIds(i: number, classes: unknown, labels: readonly string[]): Set<number> | undefined {
  if (classes === undefined || classes === null) return undefined;
  const param = `steps[${i}].parameters.classes`;
  if (!Array.isArray(classes)) throw errors.invalidParam(param, `Expected an array of class names for ${param}`);
  const ids = new Set<number>();
  for (const name of classes) {
    const want = typeof name === 'string' ? name.trim().toLowerCase() : undefined;
    const id = want === undefined ? -1 : labels.findIndex((l) => l.toLowerCase() === want);
    if (id < 0) {
      throw errors.unknownClass(param, name, labels);
    }
    ids.add(id);
  }
  return ids;
}

export const detectStep = defineStep({
  name: 'detect',
  schema: z.strictObject({
    model: z.literal('detect'),
    parameters: z
      .strictObject({
        model: z
          .string(expected('a detect model id string', 'parameters.model'))
          .max(200)
          .optional()
          .meta({ description: 'Detector id (GET /v1/models, task detect); default centernet-coco' }),
        classes: names('parameters.classes').optional().meta({
          description: "Only these classes, by the detector's own names (COCO names for the default); default all",
        }),
        confidence_threshold: unit('parameters.confidence_threshold').optional().meta({ description: 'Default 0.5' }),
      })
      .optional(),
    when: When.optional(),
  }),
  parameters: ['model', 'classes', 'confidence_threshold'],
  prepare(i, params, models): Promise<Detector> {
    const id = detectStepModel(i, params);
    return id === undefined ? models.detector() : models.detector(id, `steps[${i}].parameters.model`);
  },
  plan({ index, params, prepared: detector }) {
    const threshold =
      params.confidence_threshold === undefined
        ? DEFAULT_CONFIDENCE
        : unitNumber(`steps[${index}].parameters.confidence_threshold`, params.confidence_threshold);
    detectStepModel(index, params);
    const wanted = classIds(index, params.classes, detector.labels);
    return {
      kind: 'detect',
      index,
      produces: true,
      labels: detector.labels,
      open(task) {
        const tracker = new TargetTracker(task.tracking, index, task.ids, threshold);
        // Lowest detector score handed to the tracker (below the reporting threshold, see target-tracker.ts).
        const floor = candidateFloor(task.tracking, threshold);
        const run: FrameRun = async (frame, targets) => {
          const raw = await detector.detectRaw(frame.image, floor, undefined, { priority: task.priority });
          const candidates: Array<Candidate & { classId: number }> = raw
            .filter((d) => !wanted || wanted.has(d.classId))
            .map((d) => {
              const box = clampBox(d.box, frame.width, frame.height);
              // The tracker tells overlapping people apart by their colours (target-tracker.ts, CROWD).
              const signature = new Float32Array(SIGNATURE_DIM);
              colourSignature(frame.image, box, signature);
              return {
                box,
                score: d.score,
                cls: detector.labels[d.classId] ?? String(d.classId),
                classId: d.classId,
                signature,
              };
            });
          for (const { candidate, trackId } of tracker.assign(candidates, frame.index)) {
            targets.push({ trackId, class: candidate.cls, confidence: candidate.score, box: [...candidate.box] });
          }
        };
        return { frame: run, snapshot: () => tracker.snapshot(), restore: (s) => tracker.restore(s) };
      },
    };
  },
});
