// The chunk a worker makes of one frame that went through the analytics engine, for the tests and bench
// that feed the MQTT camera publisher directly: the frame's tracks as targets (their boxes as ROIs, confidence
// 0.9), the engine's events and totals, and the frame's place in a 10 fps stream.
import type { AnalyticsFrame } from '../../src/video/analytics/engine.js';
import type { FrameOutput } from '../../src/video/task-contract.js';

export function analyticsFrameOutput(
  frame: AnalyticsFrame,
  analytics: NonNullable<FrameOutput['analytics']>,
  streamInfo: Partial<FrameOutput['stream_info']> = {},
): FrameOutput {
  return {
    stream_info: {
      frame_index: frame.frame_index,
      total_frames: null,
      decoded_frames: frame.frame_index + 1,
      dropped_frames: 0,
      fps: 10,
      elapsed_ms: frame.t_ms,
      ...streamInfo,
    },
    delta: {
      results: [
        {
          index: 0,
          targets: frame.tracks.map((t) => ({
            track_id: t.track_id,
            class: t.class,
            confidence: 0.9,
            roi: { left: t.box[0], top: t.box[1], width: t.box[2] - t.box[0], height: t.box[3] - t.box[1] },
          })),
        },
      ],
    },
    analytics,
  };
}
