// Moment search (docs/moments.md): the items a video task's index step wrote carry where they are in the
// video and in the task's result stream (metadata task_id, video, kind, start_ms, end_ms, stream_offset).
// A plain search adds that as `moment` to each such result; group_by "video" gathers the matching items of
// each video into moments: the best matching segment grows by the adjacent segments (at most merge_gap_ms
// apart) of the same task that match about as well, so one shot cut into several segments is one hit.
import { z } from 'zod';
import { momentMetadataOf } from '../services/moment-metadata.js';

/** Candidates searched per requested video group: moments need the runner-up segments to merge them. */
export function groupedCandidates(topK: number): number {
  return Math.min(200, Math.max(30, topK * 4));
}
export const DEFAULT_MERGE_GAP_MS = 1000;
/** A neighbour of another shot merges into a moment only when it scores within this share of the video's
 * score spread (best minus median candidate) below the moment's best segment: scores are relative (a text
 * query's cosines to images all lie close together), so an absolute margin would merge unrelated shots.
 * Segments of one shot always merge. */
export const MERGE_SPREAD_SHARE = 0.1;
export const MOMENTS_PER_VIDEO = 10;

export const MomentOut = z
  .object({
    task_id: z.string(),
    video: z.string(),
    kind: z.enum(['segment', 'track']),
    start_ms: z.number(),
    end_ms: z.number(),
    score: z.number(),
    thumbnail_url: z.string().nullable().meta({ description: 'Presigned link to a JPEG of the moment (an hour)' }),
    stream_offset: z.number().int().meta({
      description:
        "Byte offset in the task's result stream where the moment's chunks begin: GET /v1/video/tasks/<task_id>/stream?offset=<stream_offset> replays it",
    }),
    item_ids: z.array(z.string()).meta({ description: 'The items the moment was merged from, best first' }),
    track_id: z.number().int().optional(),
    class: z.string().optional(),
  })
  .meta({ id: 'Moment' });
export type MomentOut = z.infer<typeof MomentOut>;

export const VideoGroupOut = z.object({ video: z.string(), score: z.number(), moments: z.array(MomentOut) });

interface Candidate extends MomentOut {
  shot?: number;
}

export interface ScoredItem {
  id: string;
  score: number;
  metadata: Record<string, unknown>;
  url: string | null;
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The moment an item stands for, or null when it is not an index step's item. */
export function momentOf(it: ScoredItem): MomentOut | null {
  return candidateOf(it, false);
}

function candidateOf(it: ScoredItem, withShot: boolean): Candidate | null {
  const m = momentMetadataOf(it.metadata);
  if (!m) return null;
  return {
    task_id: m.task_id,
    video: m.video,
    kind: m.kind,
    start_ms: m.start_ms,
    end_ms: m.end_ms,
    score: it.score,
    thumbnail_url: it.url,
    stream_offset: m.stream_offset,
    item_ids: [it.id],
    ...(num(m.track_id) ? { track_id: m.track_id } : {}),
    ...(typeof m.class === 'string' ? { class: m.class } : {}),
    ...(withShot && num(m.shot) ? { shot: m.shot } : {}),
  };
}

/** Hits (best first) grouped by video, moments merged; the topK best videos, best first. */
export function groupByVideo(
  hits: ScoredItem[],
  topK: number,
  mergeGapMs: number,
): Array<z.infer<typeof VideoGroupOut>> {
  const byVideo = new Map<string, Candidate[]>();
  for (const h of hits) {
    const m = candidateOf(h, true);
    if (!m) continue;
    let list = byVideo.get(m.video);
    if (!list) byVideo.set(m.video, (list = []));
    list.push(m);
  }
  const groups = [...byVideo].map(([video, items]) => {
    const moments = mergeMoments(items, mergeGapMs).slice(0, MOMENTS_PER_VIDEO);
    return { video, score: moments[0]!.score, moments };
  });
  return groups.sort((a, b) => b.score - a.score).slice(0, topK);
}

/** Seeds in score order; each grows over the neighbouring segments of its task not yet taken that are at
 * most mergeGapMs away and either of the same shot or scoring about as well as the seed (MERGE_SPREAD_SHARE). Tracks
 * stay moments of their own. */
export function mergeMoments(items: Candidate[], mergeGapMs: number): MomentOut[] {
  const taken = new Set<Candidate>();
  const scores = items.map((x) => x.score).sort((a, b) => b - a);
  const margin = scores.length > 1 ? MERGE_SPREAD_SHARE * (scores[0]! - scores[Math.floor(scores.length / 2)]!) : 0;
  const out: MomentOut[] = [];
  for (const seed of [...items].sort((a, b) => b.score - a.score)) {
    if (taken.has(seed)) continue;
    taken.add(seed);
    if (seed.kind === 'track') {
      const { shot: _, ...moment } = seed;
      out.push(moment);
      continue;
    }
    const near = items
      .filter(
        (x) =>
          x.kind === 'segment' &&
          !taken.has(x) &&
          x.task_id === seed.task_id &&
          ((x.shot !== undefined && x.shot === seed.shot) || x.score >= seed.score - margin),
      )
      .sort((a, b) => a.start_ms - b.start_ms);
    let start = seed.start_ms;
    let end = seed.end_ms;
    let offset = seed.stream_offset;
    let thumb = seed.thumbnail_url;
    const ids = [...seed.item_ids];
    for (let grew = true; grew; ) {
      grew = false;
      for (const x of near) {
        if (taken.has(x)) continue;
        if (x.end_ms <= start && start - x.end_ms <= mergeGapMs) {
          start = x.start_ms;
          offset = Math.min(offset, x.stream_offset);
        } else if (x.start_ms >= end && x.start_ms - end <= mergeGapMs) end = x.end_ms;
        else continue;
        taken.add(x);
        ids.push(x.item_ids[0]!);
        grew = true;
      }
    }
    thumb ??= null;
    const { shot: _, ...moment } = seed;
    out.push({ ...moment, start_ms: start, end_ms: end, stream_offset: offset, thumbnail_url: thumb, item_ids: ids });
  }
  return out.sort((a, b) => b.score - a.score);
}
