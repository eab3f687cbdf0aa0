// Moment merging (src/vectors/moment-search.ts): segments of one shot merge within merge_gap_ms, other
// neighbours only when they score about as well as the moment's best, tracks never; grouping by video keeps
// the top_k videos best first, and items that no index step wrote are no moments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupByVideo, momentOf } from '../../src/vectors/moment-search.js';

const seg = (id: string, video: string, start: number, end: number, score: number, shot: number, task = 'vt_1') => ({
  id,
  score,
  url: `k/${id}.jpg`,
  metadata: { task_id: task, video, kind: 'segment', start_ms: start, end_ms: end, stream_offset: start / 10, shot },
});

test('one shot merges, another shot only when it scores as well, gaps beyond merge_gap_ms split, videos best first', () => {
  const hits = [
    seg('a2', 'cam-a', 4000, 8000, 0.3, 1),
    seg('a1', 'cam-a', 0, 4000, 0.25, 1),
    seg('a3', 'cam-a', 8000, 9000, 0.21, 2),
    seg('a9', 'cam-a', 30000, 34000, 0.2, 5),
    seg('a8', 'cam-a', 20000, 24000, 0.1, 4),
    seg('a7', 'cam-a', 40000, 44000, 0.05, 6),
    seg('b1', 'cam-b', 2000, 4000, 0.28, 1, 'vt_2'),
    seg('b2', 'cam-b', 4500, 6000, 0.28, 1, 'vt_2'),
    { id: 'x', score: 0.9, url: null, metadata: { note: 'not a moment' } },
  ];
  const groups = groupByVideo(hits, 10, 1000);
  assert.deepEqual(
    groups.map((g) => g.video),
    ['cam-a', 'cam-b'],
  );
  const a = groups[0]!.moments;
  // Shot 1 (0-8 s) is one moment from its start's offset; shot 2 scores 0.09 below it (spread 0.30 - 0.20 = 0.10,
  // so a tenth is 0.01): a moment of its own.
  assert.deepEqual(
    a.map((m) => [m.start_ms, m.end_ms, m.item_ids, m.stream_offset]),
    [
      [0, 8000, ['a2', 'a1'], 0],
      [8000, 9000, ['a3'], 800],
      [30000, 34000, ['a9'], 3000],
      [20000, 24000, ['a8'], 2000],
      [40000, 44000, ['a7'], 4000],
    ],
  );
  assert.deepEqual(
    groups[1]!.moments.map((m) => [m.start_ms, m.end_ms]),
    [[2000, 6000]],
    '500 ms apart, within merge_gap_ms',
  );
  assert.deepEqual(
    groupByVideo(hits, 10, 0)[1]!.moments.map((m) => [m.start_ms, m.end_ms]),
    [
      [2000, 4000],
      [4500, 6000],
    ],
  );
  assert.deepEqual(
    groupByVideo(hits, 1, 1000).map((g) => g.video),
    ['cam-a'],
  );
  assert.equal(momentOf(hits.at(-1)!), null);
  const track = {
    id: 't',
    score: 0.5,
    url: null,
    metadata: {
      task_id: 'vt_1',
      video: 'cam-a',
      kind: 'track',
      start_ms: 0,
      end_ms: 9000,
      stream_offset: 0,
      track_id: 3,
      class: 'car',
    },
  };
  const withTrack = groupByVideo([track, ...hits], 10, 1000)[0]!.moments;
  assert.deepEqual(
    [withTrack[0]!.kind, withTrack[0]!.item_ids, withTrack[0]!.class, withTrack[0]!.track_id],
    ['track', ['t'], 'car', 3],
  );
});
