// Request and response shapes of /v1/video/* (docs/video.md, "Request"): the server validates
// with these and the OpenAPI document is generated from them. Bodies are strict: an unknown field, step model
// or step parameter is a 400 naming it. Messages follow "Expected X for field but received Y".
import { z } from 'zod';
import { expected, received, unit } from './pipeline/step-schema.js';
import { STEP_MODELS, stepApiFields, stepSchemas, WEBHOOK_EVENTS } from './steps/step-list.js';
import {
  DEFAULT_MAX_FRAMES,
  DEFAULT_RECONNECT,
  DEFAULT_STALL_TIMEOUT_SECONDS,
  TASK_STATES,
  VIDEO_BASE64_MAX_BYTES,
  VIDEO_URL_SCHEMES,
} from './task-contract.js';
import { Publish } from './mqtt/publish.schema.js';

export { STEP_MODELS };

// The steps' own answers and webhook events, from the step list (each step's descriptor says them).
const EVENT_TYPES = [...WEBHOOK_EVENTS.keys()] as [string, ...string[]];
const EVENT_OWNERS = [...new Set(WEBHOOK_EVENTS.values())].join(' or ');

const positive = (field: string) =>
  z.number(expected('a number greater than 0', field)).gt(0, expected('a number greater than 0', field));

const Sampling = z
  .discriminatedUnion(
    'mode',
    [
      z.strictObject({
        mode: z.literal('fps'),
        value: positive('sampling.value').meta({
          description:
            'Frames per second of video time. On a live source, a frame up to half a source frame before a sample time counts as reaching it (camera timestamps jitter), so a camera sampled at its own rate keeps every frame; files take the first frame at or after each sample time',
        }),
      }),
      z.strictObject({
        mode: z.literal('interval'),
        value: positive('sampling.value').meta({ description: 'One frame every value seconds' }),
      }),
      z.strictObject({ mode: z.literal('keyframe') }),
    ],
    expected('one of "fps", "interval", "keyframe"', 'sampling.mode'),
  )
  .meta({ description: 'Default: 1 frame per second ({mode: "fps", value: 1})' });

const Range = z
  .strictObject({
    start: z
      .number(expected('a number >= 0', 'range.start'))
      .min(0, expected('a number >= 0', 'range.start'))
      .optional(),
    end: positive('range.end').optional(),
    unit: z
      .enum(['seconds', 'frames'], expected('"seconds" or "frames"', 'range.unit'))
      .optional()
      .meta({ description: 'Default seconds' }),
  })
  .superRefine((r, ctx) => {
    if (r.start !== undefined && r.end !== undefined && !(r.end > r.start)) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `Expected range.end greater than range.start (${r.start}) but received ${r.end}`,
      });
    }
  })
  .meta({ description: 'Default: the whole video. unit seconds (default) or frames; end is exclusive' });

const Reconnect = z
  .strictObject({
    max_attempts: z
      .number(expected('an integer between 0 and 100', 'reconnect.max_attempts'))
      .int(expected('an integer between 0 and 100', 'reconnect.max_attempts'))
      .min(0, expected('an integer between 0 and 100', 'reconnect.max_attempts'))
      .max(100, expected('an integer between 0 and 100', 'reconnect.max_attempts'))
      .optional()
      .meta({
        description: `Reopen attempts after the live source dropped, per drop; 0 never reopens. Default ${DEFAULT_RECONNECT.max_attempts}`,
      }),
    max_seconds: z
      .number(expected('a number between 0 and 3600', 'reconnect.max_seconds'))
      .min(0, expected('a number between 0 and 3600', 'reconnect.max_seconds'))
      .max(3600, expected('a number between 0 and 3600', 'reconnect.max_seconds'))
      .optional()
      .meta({
        description: `Longest time one drop may take to come back (attempts included); default ${DEFAULT_RECONNECT.max_seconds}`,
      }),
  })
  .meta({
    description:
      'Live inputs: a dropped source is reopened with exponential backoff (0.5 s doubling to 8 s) within both bounds; frames lost in the gap count as dropped_frames. When it does not come back the task fails with error.code source_lost',
  });

const InputElement = z
  .strictObject({
    type: z.enum(['video_url', 'video_base64'], expected('"video_url" or "video_base64"', 'type')),
    url: z
      .string(expected('an http(s) or rtsp(s) URL string', 'url'))
      .max(8192, expected('at most 8192 characters', 'url'))
      .optional()
      .meta({
        description:
          'Required for video_url: a public http(s) URL or a presigned GET URL of a file; or a live source: rtsp(s)://, an HLS playlist (.m3u8, live or not), an endless http(s) MPEG-TS or FLV stream. Live sources have total_frames null and run until cancelled, max_frames, the source ends or fails',
      }),
    reconnect: Reconnect.optional(),
    stall_timeout_seconds: z
      .number(expected('a number between 0.1 and 3600', 'stall_timeout_seconds'))
      .min(0.1, expected('a number between 0.1 and 3600', 'stall_timeout_seconds'))
      .max(3600, expected('a number between 0.1 and 3600', 'stall_timeout_seconds'))
      .optional()
      .meta({
        description: `Longest wait for data from a URL (and, live, between two frames) before the source counts as dropped; once connected, reading the stream information (up to a first key frame) may take it or 10 s, whichever is longer. Default ${DEFAULT_STALL_TIMEOUT_SECONDS}`,
      }),
    data: z
      .string(expected('a base64 string or data URI', 'data'))
      .optional()
      .meta({
        description: `Required for video_base64: a data URI (data:video/mp4;base64,...) or bare base64; up to ${VIDEO_BASE64_MAX_BYTES} bytes decoded. Staged to the blob store before any worker reads it`,
      }),
    sampling: Sampling.optional(),
    range: Range.optional(),
    max_frames: z
      .number(expected('an integer >= 1', 'max_frames'))
      .int(expected('an integer >= 1', 'max_frames'))
      .min(1, expected('an integer >= 1', 'max_frames'))
      .optional()
      .meta({
        description: `Stop after this many processed frames (finish_reason max_frames). Default ${DEFAULT_MAX_FRAMES}`,
      }),
  })
  .superRefine((el, ctx) => {
    if (el.type === 'video_url') {
      if (el.url === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'Expected an http(s) or rtsp(s) URL for url when type is video_url but received nothing',
        });
      else {
        let ok = false;
        try {
          const u = new URL(el.url);
          ok = (VIDEO_URL_SCHEMES as readonly string[]).includes(u.protocol) && u.hostname !== '';
        } catch {
          /* not a URL */
        }
        if (!ok)
          ctx.addIssue({
            code: 'custom',
            path: ['url'],
            message: `Expected an http(s) or rtsp(s) URL for url but received ${received(el.url.slice(0, 200))}`,
          });
      }
      if (el.data !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['data'],
          message: 'Expected no data when type is video_url (data belongs to video_base64)',
        });
    } else {
      if (el.data === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['data'],
          message: 'Expected a base64 string or data URI for data when type is video_base64 but received nothing',
        });
      if (el.url !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'Expected no url when type is video_base64 (url belongs to video_url)',
        });
    }
  });

// Each step's request schema is its folder's (pipeline/<step>/step.ts); the registry lists them in order.
const Step = z.discriminatedUnion('model', stepSchemas(), {
  error: (iss: { code?: string; input?: unknown }) =>
    iss.code === 'invalid_union'
      ? `Expected one of ${STEP_MODELS.join(', ')} for model but received ${received((iss.input as { model?: unknown } | undefined)?.model)}`
      : undefined,
});

const Tracker = z
  .strictObject({
    type: z.enum(['sort', 'bytetrack'], expected('"sort" or "bytetrack"', 'tracker.type')).optional().meta({
      description:
        'Default sort (measured better than bytetrack on the dev tracking sets); bytetrack adds a second association of low-score boxes',
    }),
    max_age: z
      .number(expected('an integer >= 1', 'tracker.max_age'))
      .int(expected('an integer >= 1', 'tracker.max_age'))
      .min(1, expected('an integer >= 1', 'tracker.max_age'))
      .max(10000)
      .optional()
      .meta({
        description:
          'Sampling intervals a track survives without a match; default 30. A live source that dropped frames while processing was behind counts the skipped intervals too, and motion is predicted over them',
      }),
    min_hits: z
      .number(expected('an integer >= 0', 'tracker.min_hits'))
      .int(expected('an integer >= 0', 'tracker.min_hits'))
      .min(0, expected('an integer >= 0', 'tracker.min_hits'))
      .max(1000)
      .optional()
      .meta({ description: 'Matches before a track is reported; default 3' }),
    iou_threshold: unit('tracker.iou_threshold')
      .optional()
      .meta({ description: 'Minimum IoU to associate; default 0.3' }),
  })
  .meta({ description: 'Task-level tracker options (extension)' });

export const ProcessBody = z.strictObject({
  input: z.array(InputElement, expected('an array with one input element', 'input')).superRefine((a, ctx) => {
    if (a.length !== 1)
      ctx.addIssue({ code: 'custom', message: `Expected exactly one input element (v1) but received ${a.length}` });
  }),
  steps: z
    .array(Step, expected('an array of steps', 'steps'))
    .min(1, expected('at least one step', 'steps'))
    .max(16, expected('at most 16 steps', 'steps')),
  model: z
    .string(expected('a string', 'model'))
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Provider routing hint; echoed in the first stream chunk' }),
  tracker: Tracker.optional(),
  publish: Publish.optional(),
  webhook: z
    .strictObject(
      {
        url: z
          .string(expected('an http(s) URL', 'webhook.url'))
          .min(1, expected('an http(s) URL', 'webhook.url'))
          .max(2048, expected('a URL of at most 2048 characters', 'webhook.url'))
          .meta({
            description:
              "Receives a POST on the task's terminal state (checked against the URL policy at every attempt)",
          }),
        secret: z
          .string(expected('a whsec_ secret', 'webhook.secret'))
          .max(200, expected('a whsec_ secret', 'webhook.secret'))
          .optional()
          .meta({
            description:
              '"whsec_" + base64 of 16-64 bytes (Standard Webhooks); generated and returned once in the 202 when omitted',
          }),
        events: z
          .array(
            z.enum(EVENT_TYPES, expected(`one of ${EVENT_TYPES.join(', ')}`, 'webhook.events')),
            expected(`an array of ${EVENT_OWNERS} event types`, 'webhook.events'),
          )
          .max(EVENT_TYPES.length)
          .optional()
          .meta({
            description:
              'Analytics events to deliver besides the terminal ones, each as {type, timestamp, data: <the event as in the stream>} with webhook-id = the event id',
          }),
      },
      expected('an object {url, secret?}', 'webhook'),
    )
    .optional()
    .meta({
      description:
        'A signed POST {type: "video.task.<state>", timestamp, data: <task record>} on succeeded, failed or cancelled, retried with exponential backoff for 24 hours',
    }),
});
export type ProcessBody = z.infer<typeof ProcessBody>;

// --- responses

const isoTime = z.string().meta({ description: 'ISO 8601' });

export const TaskCreated = z
  .object({
    id: z.string().meta({ description: 'vt_...' }),
    status: z.enum(TASK_STATES),
    stream_url: z.string().meta({ description: '/v1/video/tasks/<id>/stream' }),
    webhook: z.object({ url: z.string(), secret: z.string() }).optional().meta({
      description: 'With a webhook but no secret in the request: the generated signing secret, shown only here',
    }),
  })
  .meta({ id: 'TaskCreated' });

export const TaskRecord = z
  .object({
    id: z.string(),
    object: z.literal('video.task'),
    status: z
      .enum(TASK_STATES)
      .meta({ description: 'pending -> running -> streaming -> succeeded | failed; cancelling -> cancelled' }),
    created_at: isoTime,
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    model: z
      .string()
      .meta({ description: 'The request model, or the step models joined with "+" when none was given' }),
    stream_url: z.string(),
    progress: z.object({
      frame_index: z.number().int().nullable(),
      decoded_frames: z.number().int(),
      dropped_frames: z.number().int(),
      total_frames: z.number().int().nullable(),
      processed_frames: z.number().int().meta({ description: 'Frames processed so far (one chunk each)' }),
      processed_fps: z.number().nullable().meta({
        description:
          'Frames processed per second since the task started: its real rate (a live camera the node cannot keep up with shows less than its sampling asks for); null before the first frame',
      }),
    }),
    usage: z.object({ processed_frames: z.number().int(), processing_time_ms: z.number().int() }).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    attempts: z.number().int().meta({
      description:
        'Times a worker claimed the task (a retry before the first chunk, or a takeover after its worker died, adds one)',
    }),
    resumes: z.number().int().meta({
      description:
        'Times the task was handed to another worker after its worker died mid-stream (live sources, at most 3; docs/video.md, "When a worker dies"); while it waits for one its status stays running/streaming',
    }),
    input_url: z.string().optional().meta({
      description:
        'A video_base64 upload: a presigned /v1/files link to the staged video (valid for an hour, byte ranges), to play what the task counted',
    }),
    ...stepApiFields('record'),
    request: z.record(z.string(), z.unknown()).optional().meta({
      description:
        'With include=request: the body as posted; video_base64 data replaced by {elided: true, bytes: <decoded length>}, webhook.secret left out',
    }),
    webhook_deliveries: z
      .array(
        z.object({
          id: z.string().meta({ description: 'msg_...; the webhook-id header of every attempt' }),
          event: z.string().meta({ description: 'video.task.<terminal state>' }),
          status: z.enum(['pending', 'delivered', 'failed']),
          attempts: z.number().int(),
          last_status_code: z.number().int().nullable(),
          last_error: z.string().nullable(),
          created_at: isoTime,
          last_attempt_at: isoTime.nullable(),
          delivered_at: isoTime.nullable(),
          next_attempt_at: isoTime.nullable().meta({ description: 'When a pending delivery is tried next' }),
        }),
      )
      .optional()
      .meta({
        description:
          "With include=webhook_deliveries: the task's webhook deliveries (empty until it reaches a terminal state)",
      }),
  })
  .meta({ id: 'Task' });

export const TaskList = z.object({
  object: z.literal('list'),
  data: z.array(TaskRecord),
  has_more: z.boolean(),
  next_cursor: z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page' }),
});

export const ListQuery = z.object({
  status: z
    .string()
    .optional()
    .meta({ description: `One state or a comma list of: ${TASK_STATES.join(', ')}` }),
  from: z.string().optional().meta({ description: 'created_at >= from; ISO 8601 or unix seconds' }),
  to: z.string().optional().meta({ description: 'created_at < to; ISO 8601 or unix seconds' }),
  cursor: z.string().optional().meta({ description: 'next_cursor of the previous page' }),
  limit: z.string().optional().meta({ description: '1-100, default 20' }),
});

export const GetQuery = z.object({
  include: z.string().optional().meta({
    description: 'Comma list: "request" echoes the request body, "webhook_deliveries" lists the webhook deliveries',
  }),
});
export const StreamQuery = z.object({
  offset: z.string().optional().meta({ description: 'Byte offset to resume from (or the Last-Event-ID header)' }),
  event_ids: z.enum(['true', 'false']).optional().meta({
    description:
      'true: every event carries `id: <archive byte offset right after it>` and the response opens with `retry: 1000`, so a standard EventSource resumes exactly through Last-Event-ID; false (default): the archive bytes unchanged',
  }),
});

const TrackSummary = z.object({
  track_id: z.number().int(),
  class: z.string(),
  first_frame: z.number().int(),
  last_frame: z.number().int(),
  frames_seen: z.number().int(),
  best_confidence: z.number(),
  feature_digest: z
    .string()
    .optional()
    .meta({ description: 'dim=<int>;norm=<decimal> of the mean feature vector (with a feature step)' }),
});

export const TaskResults = z
  .object({
    id: z.string(),
    object: z.literal('mm.pipeline.result'),
    model: z.string(),
    usage: z.object({ processed_frames: z.number().int(), processing_time_ms: z.number().int() }),
    tracks: z.array(TrackSummary),
    ...stepApiFields('results'),
  })
  .meta({ id: 'TaskResults' });

export const StreamChunk = z
  .object({
    id: z.string(),
    object: z.literal('mm.pipeline.chunk'),
    model: z.string().optional().meta({ description: 'First chunk only' }),
    stream_info: z.object({
      frame_index: z.number().int(),
      total_frames: z.number().int().nullable().meta({ description: 'null for live sources' }),
      decoded_frames: z.number().int(),
      dropped_frames: z.number().int().meta({
        description:
          'Frames decoded and not processed: sampling skips, decode failures and, live, frames dropped because processing was behind the source (newest frame wins) or lost while it reconnected',
      }),
      fps: z.number(),
      elapsed_ms: z.number().int(),
      stream_time_ms: z.number().int().optional().meta({
        description:
          "The frame's time in the stream: from the video start for files, from the first frame received for live sources (reconnect gaps included)",
      }),
      received_at_ms: z.number().int().optional().meta({
        description:
          "When the decoder received the frame (unix epoch ms). A live client's lag is its clock minus this; the chunk was archived about elapsed processing later",
      }),
      live: z.boolean().optional().meta({ description: 'true for a live source (no end known in advance)' }),
      reconnects: z.number().int().optional().meta({ description: 'Live: times the source was reopened so far' }),
      gap_ms: z.number().int().optional().meta({
        description:
          'Live, on the first chunk after another worker took the task over (its worker died): wall-clock ms since the frame before it',
      }),
    }),
    delta: z.object({
      results: z.array(z.object({ index: z.number().int(), targets: z.array(z.record(z.string(), z.unknown())) })),
    }),
    ...stepApiFields('chunk'),
    finish_reason: z.enum(['stop', 'max_frames', 'error', 'cancelled']).nullable(),
    usage: z
      .object({
        processed_frames: z.number().int(),
        processing_time_ms: z.number().int(),
        decoded_frames: z.number().int(),
        dropped_frames: z.number().int(),
      })
      .optional(),
  })
  .meta({
    id: 'Chunk',
    description:
      'Each SSE event is "data: <chunk JSON>\\n\\n"; after the terminal chunk "data: [DONE]\\n\\n". Comments ": hb" keep idle streams open. Resume with Last-Event-ID or ?offset= (bytes).',
  });
