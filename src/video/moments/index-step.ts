// The index step's parameters (docs/moments.md): its zod schema for POST /v1/video/process and the checked
// settings the indexer runs with. Like plan.ts, indexSettings re-checks what the schema already did, since a
// provider may be handed a request that never passed it.
import { z } from 'zod';
import { errors } from '../../base/errors.js';
import type { PlannedStep } from '../pipeline/frame-step.js';
import { expected } from '../pipeline/step-schema.js';

export const INDEX_STEP_PARAMS = ['collection', 'per', 'segment_ms', 'segmenting', 'video_id'] as const;
export const INDEX_PER = ['segment', 'track'] as const;
export const SEGMENTING = ['scene', 'fixed'] as const;
export type Segmenting = (typeof SEGMENTING)[number];
/** Longest segment; chosen by `npm run eval -- moments` (docs/moments.md). */
export const DEFAULT_SEGMENT_MS = 4000;
/** Cuts at scene changes within segment_ms: beat fixed windows on the eval's temporal IoU (docs/moments.md). */
export const DEFAULT_SEGMENTING: Segmenting = 'scene';
export const SEGMENT_MS_RANGE = [500, 60_000] as const;

export interface IndexSettings {
  index: number;
  collection: string;
  segments: boolean;
  tracks: boolean;
  segmentMs: number;
  segmenting: Segmenting;
  videoId: string | undefined;
}

export const IndexStepSchema = z
  .strictObject({
    model: z.literal('index'),
    parameters: z.strictObject({
      collection: z.string(expected('a collection id string (col_...)', 'parameters.collection')).min(1).max(200).meta({
        description:
          'The vector collection (of this project) the moments are written to; its embedding model embeds the frames',
      }),
      per: z
        .array(
          z.enum(INDEX_PER, expected('"segment" or "track"', 'each entry of parameters.per')),
          expected('an array of "segment" and/or "track"', 'parameters.per'),
        )
        .min(1, expected('at least one of "segment", "track"', 'parameters.per'))
        .max(2)
        .optional()
        .meta({
          description:
            'What becomes an item: "segment" (a time window of the video), "track" (a tracked object; needs a detect step). Default ["segment"]',
        }),
      segment_ms: z
        .number(
          expected(`an integer between ${SEGMENT_MS_RANGE[0]} and ${SEGMENT_MS_RANGE[1]}`, 'parameters.segment_ms'),
        )
        .int()
        .min(
          SEGMENT_MS_RANGE[0],
          expected(`an integer between ${SEGMENT_MS_RANGE[0]} and ${SEGMENT_MS_RANGE[1]}`, 'parameters.segment_ms'),
        )
        .max(
          SEGMENT_MS_RANGE[1],
          expected(`an integer between ${SEGMENT_MS_RANGE[0]} and ${SEGMENT_MS_RANGE[1]}`, 'parameters.segment_ms'),
        )
        .optional()
        .meta({ description: `Longest segment in ms (the window of a fixed cut); default ${DEFAULT_SEGMENT_MS}` }),
      segmenting: z
        .enum(SEGMENTING, expected('"scene" or "fixed"', 'parameters.segmenting'))
        .optional()
        .meta({
          description: `"scene": a segment ends at a scene change or after segment_ms; "fixed": every segment_ms. Default ${DEFAULT_SEGMENTING}`,
        }),
      video_id: z
        .string(expected('a string of 1 to 256 characters', 'parameters.video_id'))
        .min(1)
        .max(256)
        .optional()
        .meta({
          description:
            "Your id for the video, stored as the items' `video` (default: the input URL, or the task id for an uploaded video)",
        }),
    }),
    when: z.undefined().optional(),
  })
  .meta({ description: 'Index the video into a collection as searchable moments (docs/moments.md)' });

/** Step i's parameters checked (they are among INDEX_STEP_PARAMS already); `before`: the steps planned before it. */
export function indexSettings(i: number, p: Record<string, unknown>, before: readonly PlannedStep[]): IndexSettings {
  const at = `steps[${i}].parameters`;
  if (before.some((s) => s.kind === 'index'))
    throw errors.invalidParam(`steps[${i}].model`, 'Expected at most one index step per task');
  if (typeof p.collection !== 'string' || p.collection.length === 0)
    throw errors.invalidParam(`${at}.collection`, `Expected a collection id string for ${at}.collection`);
  const per = p.per ?? ['segment'];
  if (!Array.isArray(per) || per.length === 0 || per.some((x) => !(INDEX_PER as readonly unknown[]).includes(x))) {
    throw errors.invalidParam(`${at}.per`, `Expected an array of "segment" and/or "track" for ${at}.per`);
  }
  const segmentMs = p.segment_ms ?? DEFAULT_SEGMENT_MS;
  if (
    typeof segmentMs !== 'number' ||
    !Number.isInteger(segmentMs) ||
    segmentMs < SEGMENT_MS_RANGE[0] ||
    segmentMs > SEGMENT_MS_RANGE[1]
  ) {
    throw errors.invalidParam(
      `${at}.segment_ms`,
      `Expected an integer between ${SEGMENT_MS_RANGE[0]} and ${SEGMENT_MS_RANGE[1]} for ${at}.segment_ms`,
    );
  }
  const segmenting = p.segmenting ?? DEFAULT_SEGMENTING;
  if (!(SEGMENTING as readonly unknown[]).includes(segmenting))
    throw errors.invalidParam(`${at}.segmenting`, `Expected "scene" or "fixed" for ${at}.segmenting`);
  if (
    p.video_id !== undefined &&
    (typeof p.video_id !== 'string' || p.video_id.length === 0 || p.video_id.length > 256)
  ) {
    throw errors.invalidParam(`${at}.video_id`, `Expected a string of 1 to 256 characters for ${at}.video_id`);
  }
  if (per.includes('track') && !before.some((s) => s.kind === 'detect')) {
    throw errors.invalidParam(
      `${at}.per`,
      'Expected a detect step before an index step that indexes tracks ("track" in per)',
    );
  }
  return {
    index: i,
    collection: p.collection,
    segments: per.includes('segment'),
    tracks: per.includes('track'),
    segmentMs,
    segmenting: segmenting as Segmenting,
    videoId: p.video_id as string | undefined,
  };
}

/** The task record's `index` (GET /v1/video/tasks/:id). */
export const IndexCounts = z
  .object({
    collection: z.string(),
    items_added: z.number().int(),
    segments: z.number().int(),
    tracks: z.number().int(),
  })
  .meta({ description: 'With an index step: the items it has written so far (segments and tracks)' });
