// The events of the analytics step, as chunks, webhooks and the API carry them.

export const EVENT_TYPES = ['line.crossed', 'zone.entered', 'zone.exited', 'zone.dwell', 'zone.crowded'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface AnalyticsEvent {
  /** Stable across a recount: `<task id>.ae_<frame_index>_<n>` (the engine alone: ae_<frame_index>_<n>). */
  id: string;
  type: EventType;
  rule: string;
  version: number;
  /** null for zone.crowded (a zone's state, not one track's). */
  track_id: number | null;
  class: string | null;
  direction?: 'in' | 'out';
  t_ms: number;
  frame_index: number;
  speed_kmh?: number;
  /** zone.exited and zone.dwell: time inside so far. */
  dwell_ms?: number;
  /** zone.crowded: tracks inside. */
  occupancy?: number;
}
