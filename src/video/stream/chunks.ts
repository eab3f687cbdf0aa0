// The SSE wire format of a task stream (docs/video.md, "The stream"): each event is `data: <chunk JSON>\n\n`; the terminal
// chunk carries finish_reason and usage and is followed by `data: [DONE]\n\n`. These strings are what the
// archive stores, so every subscriber receives exactly these bytes.
import type { FrameOutput, StreamInfo } from '../task-contract.js';

export type FinishReason = 'stop' | 'max_frames' | 'error' | 'cancelled';

export interface TerminalUsage {
  processed_frames: number;
  processing_time_ms: number;
  decoded_frames: number;
  dropped_frames: number;
}

export const DONE_EVENT = 'data: [DONE]\n\n';
/** An SSE comment; archived like every other byte so offsets mean the same to every subscriber. */
export const HEARTBEAT_EVENT = ': hb\n\n';

export const EMPTY_STREAM_INFO: StreamInfo = {
  frame_index: 0,
  total_frames: null,
  decoded_frames: 0,
  dropped_frames: 0,
  fps: 0,
  elapsed_ms: 0,
};

/** `<task id>.<n>`: unique per task, n counts the chunks of the task from 0. */
export function chunkId(taskId: string, seq: number): string {
  return `${taskId}.${seq}`;
}

export function event(json: unknown): string {
  return `data: ${JSON.stringify(json)}\n\n`;
}

/** One processed frame. The first chunk of a task (seq 0) echoes the model. */
export function frameEvent(taskId: string, seq: number, frame: FrameOutput, model: string): string {
  return event({
    id: chunkId(taskId, seq),
    object: 'mm.pipeline.chunk',
    ...(seq === 0 ? { model } : {}),
    stream_info: frame.stream_info,
    delta: frame.delta,
    ...(frame.analytics ? { analytics: frame.analytics } : {}),
    finish_reason: null,
  });
}

/**
 * The terminal chunk (no results of its own; stream_info repeats the last frame's) and the [DONE] marker.
 * An `error` chunk also says what went wrong, as the task record does; `extra`: fields the task's steps add (analytics).
 */
export function terminalEvents(
  taskId: string,
  seq: number,
  reason: FinishReason,
  info: StreamInfo,
  usage: TerminalUsage,
  model: string,
  error?: { code: string; message: string },
  extra?: Record<string, unknown>,
): string {
  return (
    event({
      id: chunkId(taskId, seq),
      object: 'mm.pipeline.chunk',
      ...(seq === 0 ? { model } : {}),
      stream_info: info,
      delta: { results: [] },
      finish_reason: reason,
      usage,
      ...(error ? { error } : {}),
      ...extra,
    }) + DONE_EVENT
  );
}
