// The MCP tools: each one names a REST route (method + path pattern) and adds what an agent needs beyond the
// route's schema: a name, a description, hints, and a one-line summary of a result. Input and output schemas
// come from the route itself (route-tools.ts), so a tool can never drift from its REST endpoint, and a tool
// whose route is not registered is simply not offered.
import type { Method } from '../http/route.js';

export interface ToolSpec {
  name: string;
  title: string;
  method: Method;
  path: string;
  description: string;
  /** Descriptions of the path parameters, which become required string arguments. */
  pathParams?: Record<string, string>;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  /** A short human line for the text content; the full JSON is the structured content. */
  summarize(json: any): string;
}

const IMAGE_INPUT =
  'Give the image as `image` (an http(s) URL) or `image_base64` (a data URI or bare base64 of a JPEG, PNG or WEBP, up to 20 MB): exactly one.';
const TASK_ID = 'Video task id (vt_...), as returned by start_video_task';
const COLLECTION_ID = 'Collection id (col_...), as listed by list_collections';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const RULES =
  'Rules are `parameters`: {lines: [{id, points: [[x1, y1], [x2, y2]], classes?}], zones: [{id, polygon: [[x, y], ...] (3-64 points), classes?, dwell_ms?, max_occupancy?}], units?: "pixels" (default, of the source frame) | "relative" (0..1)}; for a line from A to B, `in` counts anchors (the feet) passing from the side where (B-A)x(P-A) < 0 to where it is > 0 (image coordinates, y down): a vertical line drawn downwards counts right-to-left as in.';
/** `door 3 in / 1 out; lobby 4 entered, max 2 inside` from an analytics summary. */
const counts = (totals: any): string => {
  const lines = Object.entries(totals?.lines ?? {}).map(
    ([id, l]: [string, any]) => `line ${id} ${l.in} in / ${l.out} out`,
  );
  const zones = Object.entries(totals?.zones ?? {}).map(
    ([id, z]: [string, any]) =>
      `zone ${id} ${z.entered} entered${z.max_occupancy !== undefined ? `, max ${z.max_occupancy} inside` : ''}`,
  );
  return [...lines, ...zones].join('; ') || 'no rules';
};
const clip = (s: string, max = 400) => (s.length > max ? `${s.slice(0, max)}...` : s);
const count = (xs: string[]) => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
};

export const TOOL_CATALOGUE: ToolSpec[] = [
  {
    name: 'describe_image',
    title: 'Describe an image',
    method: 'POST',
    path: '/v1/vision/describe',
    description: `Describe an image in natural language (objects, counts, colours, visible text). ${IMAGE_INPUT} Optional: prompt (what to focus on), language (en, zh), detail (low | high).`,
    annotations: { readOnlyHint: true, openWorldHint: true },
    summarize: (j) => String(j?.description ?? ''),
  },
  {
    name: 'read_text',
    title: 'Read text in an image (OCR)',
    method: 'POST',
    path: '/v1/vision/ocr',
    description: `Extract the text of an image: full text in reading order plus line blocks with [x1, y1, x2, y2] pixel boxes and confidences. ${IMAGE_INPUT} Optional: language hint (auto, en, zh).`,
    annotations: { readOnlyHint: true, openWorldHint: true },
    summarize: (j) => {
      const blocks = Array.isArray(j?.blocks) ? j.blocks.length : 0;
      return blocks ? `Read ${plural(blocks, 'text block')}:\n${clip(String(j?.text ?? ''))}` : 'No text found.';
    },
  },
  {
    name: 'detect_objects',
    title: 'Detect objects',
    method: 'POST',
    path: '/v1/vision/detect',
    description: `Detect objects (80 COCO classes such as person, car, dog) with [x1, y1, x2, y2] pixel boxes, confidences and dominant colour. ${IMAGE_INPUT} Optional: classes (only these), confidence_threshold (0-1, default 0.5).`,
    annotations: { readOnlyHint: true, openWorldHint: true },
    summarize: (j) => {
      const objs: Array<{ class?: string }> = Array.isArray(j?.objects) ? j.objects : [];
      return objs.length
        ? `Detected ${plural(objs.length, 'object')}: ${count(objs.map((o) => String(o.class)))}.`
        : 'No objects detected.';
    },
  },
  {
    name: 'start_video_task',
    title: 'Start a video task',
    method: 'POST',
    path: '/v1/video/process',
    description:
      'Enqueue asynchronous video processing: one input ({type: "video_url", url} or {type: "video_base64", data}, optional sampling, range, max_frames) and a pipeline of steps ({model: "detect" | "ocr" | "feature" | "analytics" | "index", parameters, when}). To count people or vehicles crossing lines or entering zones, add {model: "analytics", parameters: {lines, zones}} after {model: "detect"}. Returns the task id at once; poll get_video_task until status is succeeded, then read get_video_results (and get_video_counts).',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    summarize: (j) =>
      `Started video task ${j?.id} (status ${j?.status}); poll it with get_video_task, then get_video_results.`,
  },
  {
    name: 'get_video_task',
    title: 'Get a video task',
    method: 'GET',
    path: '/v1/video/tasks/:id',
    description:
      'Status and progress of a video task: pending, running, streaming, succeeded, failed, cancelling or cancelled, with frame counts, usage and error. Optional include: "request" echoes the request body.',
    pathParams: { id: TASK_ID },
    annotations: { readOnlyHint: true },
    summarize: (j) => {
      const p = j?.progress;
      const frames =
        p && typeof p.frame_index === 'number'
          ? ` (frame ${p.frame_index}${p.total_frames ? ` of ${p.total_frames}` : ''})`
          : '';
      const err = j?.error?.message ? `: ${j.error.message}` : '';
      return `Video task ${j?.id} is ${j?.status}${frames}${err}.`;
    },
  },
  {
    name: 'get_video_results',
    title: 'Get video results',
    method: 'GET',
    path: '/v1/video/tasks/:id/results',
    description:
      'The final per-track summary of a succeeded video task: track_id, class, first/last frame, frames seen, best confidence, feature digest. Not found until the task has succeeded.',
    pathParams: { id: TASK_ID },
    annotations: { readOnlyHint: true },
    summarize: (j) => {
      const tracks: Array<{ class?: string }> = Array.isArray(j?.tracks) ? j.tracks : [];
      const frames = j?.usage?.processed_frames;
      return `Video task ${j?.id}: ${plural(tracks.length, 'track')}${tracks.length ? ` (${count(tracks.map((t) => String(t.class)))})` : ''} over ${plural(Number(frames ?? 0), 'processed frame')}.`;
    },
  },
  {
    name: 'cancel_video_task',
    title: 'Cancel a video task',
    method: 'POST',
    path: '/v1/video/tasks/:id/cancel',
    description:
      'Cancel a video task: a pending task is cancelled at once, a running one at the next chunk boundary. Cancelling again is harmless; a task that already succeeded or failed is a conflict.',
    pathParams: { id: TASK_ID },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    summarize: (j) => `Video task ${j?.id} is ${j?.status}.`,
  },
  {
    name: 'get_video_counts',
    title: 'Counts of a video task so far',
    method: 'GET',
    path: '/v1/video/tasks/:id/analytics',
    description:
      'The counts of a video task with an analytics step, also while it runs: per line `in`/`out` (by class, per time bucket), per zone entered/exited/occupancy/dwell, zone-to-zone transitions, and the rules (`parameters`, `version`) and source `frame_size`. A task without an analytics step is an error: recount it with count_on_video.',
    pathParams: { id: TASK_ID },
    annotations: { readOnlyHint: true },
    summarize: (j) =>
      j?.totals
        ? `Video task ${j?.task_id} (${j?.status}), rules version ${j?.version}: ${counts(j.totals)}.`
        : `Video task ${j?.task_id} (${j?.status}) has no counts yet.`,
  },
  {
    name: 'count_on_video',
    title: 'Count on a video with lines and zones',
    method: 'POST',
    path: '/v1/video/tasks/:id/analytics/recount',
    description: `Count objects crossing lines and entering zones on a finished video task, from its stored tracks (seconds; the video is not decoded again). Start the task with start_video_task (a detect step, so objects are tracked; add an analytics step to also get live counts) and wait until it succeeded; then call this with the task id and any rules, as often as you like. Without parameters it recounts with the task's own rules. ${RULES} Answers the totals per rule.`,
    pathParams: { id: TASK_ID },
    annotations: { readOnlyHint: true, idempotentHint: true },
    summarize: (j) =>
      `Counted ${plural(Number(j?.frames ?? 0), 'frame')} of video task ${j?.task_id}: ${counts(j?.totals)} (${j?.events} events, ${j?.recount_ms} ms).`,
  },
  {
    name: 'list_collections',
    title: 'List vector collections',
    method: 'GET',
    path: '/v1/vectors/collections',
    description:
      "The project's vector collections (id, name, description, embedding model, dimensions, item count). Use an id with index_items or search_collection.",
    annotations: { readOnlyHint: true },
    summarize: (j) => {
      const cols: Array<{ id?: string; name?: string; item_count?: number }> = Array.isArray(j?.data) ? j.data : [];
      if (!cols.length) return 'No collections.';
      return `${plural(cols.length, 'collection')}: ${clip(cols.map((c) => `${c.name} (${c.id}, ${plural(Number(c.item_count ?? 0), 'item')})`).join('; '))}`;
    },
  },
  {
    name: 'create_collection',
    title: 'Create a vector collection',
    method: 'POST',
    path: '/v1/vectors/collections',
    description:
      'Create a vector collection in the project: name (unique, 1-100 characters), optional description and model_id (embedding model; default multimodal-embedding-v1). Then add items with index_items.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    summarize: (j) => `Created collection ${j?.name} (${j?.id}).`,
  },
  {
    name: 'index_items',
    title: 'Index items into a collection',
    method: 'POST',
    path: '/v1/vectors/collections/:id/index',
    description:
      'Embed and store up to 100 items in a collection. Each item has exactly one of image (URL), image_base64, text or audio, and optional metadata (a free key/value object). All modalities share one vector space.',
    pathParams: { id: COLLECTION_ID },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    summarize: (j) => `Indexed ${plural(Number(j?.indexed ?? 0), 'item')} (model ${j?.model}).`,
  },
  {
    name: 'search_collection',
    title: 'Search a collection',
    method: 'POST',
    path: '/v1/vectors/collections/:id/search',
    description:
      'Similarity search in a collection with exactly one query of image (URL), image_base64, text or audio; the query may use another modality than the stored items. Optional top_k (1-100, default 10) and threshold (0-1 minimum cosine score).',
    pathParams: { id: COLLECTION_ID },
    annotations: { readOnlyHint: true, openWorldHint: true },
    summarize: (j) => {
      const rs: Array<{ id?: string; score?: number; content_type?: string }> = Array.isArray(j?.results)
        ? j.results
        : [];
      if (!rs.length) return 'No results.';
      return `${plural(rs.length, 'result')}; best: ${rs
        .slice(0, 3)
        .map((r) => `${r.id} (${r.content_type}, score ${Number(r.score).toFixed(3)})`)
        .join(', ')}.`;
    },
  },
  {
    name: 'find_moments',
    title: 'Find moments in indexed videos',
    method: 'POST',
    path: '/v1/vectors/collections/:id/search',
    description:
      'Find where in indexed videos and camera streams something happens: search a collection that video tasks indexed (an index step) with group_by: "video" and one query of text, image (URL), image_base64 or audio. Answers the top_k videos, each with its moments {task_id, start_ms, end_ms, score, thumbnail_url, stream_offset}; replay a moment\'s boxes with GET /v1/video/tasks/<task_id>/stream?offset=<stream_offset>. Optional merge_gap_ms (adjacent segments this close merge, default 1000) and filter on item metadata, e.g. {"class": "car"}, {"zone:gate": true}, {"kind": "track"}, {"video": "gate-cam"}.',
    pathParams: { id: COLLECTION_ID },
    annotations: { readOnlyHint: true, openWorldHint: true },
    summarize: (j) => {
      const vs: Array<{ video?: string; moments?: Array<{ start_ms: number; end_ms: number; score: number }> }> =
        Array.isArray(j?.videos) ? j.videos : [];
      if (!vs.length) return Array.isArray(j?.results) ? 'Pass group_by: "video" to get moments.' : 'No moments found.';
      const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      return `${plural(vs.length, 'video')}: ${vs
        .slice(0, 3)
        .map(
          (v) =>
            `${v.video} ${(v.moments ?? [])
              .slice(0, 3)
              .map((m) => `${s(m.start_ms)}-${s(m.end_ms)} (score ${m.score.toFixed(3)})`)
              .join(', ')}`,
        )
        .join('; ')}.`;
    },
  },
  {
    name: 'get_project',
    title: "The API key's project",
    method: 'GET',
    path: '/v1/project',
    description:
      'The project this API key belongs to (id, name, creation time): a cheap way to check the connection and key.',
    annotations: { readOnlyHint: true },
    summarize: (j) => `Project ${j?.name} (${j?.id}).`,
  },
];
