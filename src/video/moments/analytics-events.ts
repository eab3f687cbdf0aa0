// Lines crossed and zones entered, read from a chunk's `analytics` field when an analytics step put one
// there ({events: [{type: 'line.crossed' | 'zone.entered' | ..., rule, track_id?}], ...}). Read defensively:
// any other shape is ignored. Stored on items twice: as arrays (`lines`, `zones`) to show, and as one
// boolean key per rule (`line:<rule>`, `zone:<rule>`) so the collection's filters select them.

import type { MomentMetadata } from '../../services/moment-metadata.js';

export interface RuleEvent {
  type: string;
  rule: string;
  track_id?: number;
}

export function analyticsOf(out: object): RuleEvent[] {
  const a = (out as { analytics?: unknown }).analytics;
  const events = a && typeof a === 'object' ? (a as { events?: unknown }).events : undefined;
  if (!Array.isArray(events)) return [];
  return events.filter(
    (e): e is RuleEvent =>
      !!e &&
      typeof e === 'object' &&
      typeof (e as RuleEvent).type === 'string' &&
      typeof (e as RuleEvent).rule === 'string' &&
      (e as RuleEvent).rule.length > 0 &&
      (e as RuleEvent).rule.length <= 200,
  );
}

export function applyRules(events: RuleEvent[], lines: Set<string>, zones: Set<string>): void {
  for (const e of events) {
    if (e.type.startsWith('line.')) lines.add(e.rule);
    else if (e.type === 'zone.entered' || e.type === 'zone.occupied') zones.add(e.rule);
  }
}

export function ruleKeys(
  lines: Set<string>,
  zones: Set<string>,
): Pick<MomentMetadata, 'lines' | 'zones' | `line:${string}` | `zone:${string}`> {
  const out: Pick<MomentMetadata, 'lines' | 'zones' | `line:${string}` | `zone:${string}`> = {};
  if (lines.size) out.lines = [...lines].sort();
  if (zones.size) out.zones = [...zones].sort();
  for (const l of lines) out[`line:${l}`] = true;
  for (const z of zones) out[`zone:${z}`] = true;
  return out;
}
