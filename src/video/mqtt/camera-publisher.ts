// One task's MQTT publishing for its camera (`publish: {mqtt: {camera}}`, docs/mqtt.md), fed by the worker
// with each chunk as archived. It hands the process's publisher:
// - per analytics event, one QoS 1 message to `<prefix>/events` and `<prefix>/<camera>/events` with the
//   event's id, the stream offset of its chunk and the counts right after it, so the messages are the
//   stream's events one for one;
// - retained state: object counts per class of the latest frame, zone occupancy per class, line totals;
// - Home Assistant discovery configs for the rules (and for classes as they first appear), with the configs
//   of a removed rule cleared when the rules change.
// Nothing here waits on the broker: every call returns once the messages are handed over.
import type { AnalyticsEvent } from '../analytics/events.js';
import type { AnalyticsParameters } from '../analytics/rules.schema.js';
import type { FrameOutput } from '../task-contract.js';
import { countTotals, totalsAfterEach, type CountTotals } from './event-totals.js';
import {
  deviceId,
  lineConfigs,
  objectConfig,
  zoneConfig,
  type DiscoveryConfig,
  type DiscoveryScope,
} from './ha-discovery.js';
import type { MqttPublisher } from './mqtt-publisher.js';
import { ALL, type CameraTopics } from './mqtt-topics.js';

export interface CameraRunOptions {
  taskId: string;
  camera: string;
  /** sightflow's version (discovery's device and origin). */
  version: string;
  /** The analytics rules in effect now and their version (they may change while the task runs); null without an analytics step. */
  rules(): { params: AnalyticsParameters; version: number } | null;
}

/** What a chunk's frame says where it is: the byte offset of its chunk in the task's stream. */
export interface ChunkPlace {
  /** A replay from this offset (`GET .../stream?offset=`) starts with or before the chunk. */
  offset: number;
}

export class CameraPublisher {
  readonly #t: CameraTopics;
  readonly #scope: DiscoveryScope;
  readonly #release: () => void;
  /** Tracks inside each zone by class, from the zone events (the engine counts only the zone's total). */
  readonly #zoneClasses = new Map<string, Map<string, number>>();
  /** Object classes seen so far (their count goes back to 0 when they leave the frame). */
  readonly #objectClasses = new Set<string>();
  /** Discovery configs this run wants now, by topic. */
  #configs = new Map<string, DiscoveryConfig>();
  #rulesVersion = -1;
  #rules: AnalyticsParameters | null = null;
  #closed = false;

  constructor(
    private readonly pub: MqttPublisher,
    private readonly opts: CameraRunOptions,
  ) {
    this.#t = pub.topics.camera(opts.camera);
    this.#scope = {
      prefix: pub.settings.topicPrefix,
      haPrefix: pub.settings.haPrefix,
      camera: opts.camera,
      version: opts.version,
    };
    this.#release = pub.holdCamera(opts.camera);
    const rules = opts.rules();
    this.#setRules(rules?.params ?? null, rules?.version ?? 1, true);
  }

  /** One archived chunk's frame: its events, then the state it leaves. */
  frame(frame: FrameOutput, at: ChunkPlace): void {
    if (this.#closed) return;
    const a = frame.analytics;
    if (a) {
      const totals = countTotals(a.totals);
      if (totals.version !== this.#rulesVersion)
        this.#setRules(this.opts.rules()?.params ?? null, totals.version, false);
      this.#events(a.events as AnalyticsEvent[], totals, at, frame.stream_info.received_at_ms);
      this.#state(totals);
    }
    this.#objects(frame);
  }

  /** The task's end: the closing events (zone exits) and the final totals, from the terminal chunk's fields. */
  finish(chunk: Record<string, unknown> | undefined, at: ChunkPlace): void {
    if (this.#closed) return;
    const a = chunk?.analytics as { events?: AnalyticsEvent[]; totals?: unknown } | undefined;
    if (!a) return;
    const totals = countTotals(a.totals);
    this.#events(a.events ?? [], totals, at, undefined);
    this.#state(totals);
  }

  /** The task is over: the camera goes offline (its retained counts and configs stay). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#release();
  }

  #events(
    events: readonly AnalyticsEvent[],
    totals: CountTotals,
    at: ChunkPlace,
    receivedAtMs: number | undefined,
  ): void {
    if (events.length === 0) return;
    const after = totalsAfterEach(events, totals);
    const targets = [this.pub.topics.events, this.#t.events];
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const t = after[i]!;
      const ruleTotals = e.type === 'line.crossed' ? t.lines[e.rule] : t.zones[e.rule];
      this.pub.event(
        targets,
        JSON.stringify({
          ...e,
          camera: this.opts.camera,
          task_id: this.opts.taskId,
          stream_offset: at.offset,
          ...(receivedAtMs !== undefined ? { received_at_ms: receivedAtMs } : {}),
          rule_totals: ruleTotals ?? null,
          totals: t,
        }),
      );
      this.#countZoneClass(e);
    }
  }

  #countZoneClass(e: AnalyticsEvent): void {
    if ((e.type !== 'zone.entered' && e.type !== 'zone.exited') || !e.class) return;
    let m = this.#zoneClasses.get(e.rule);
    if (!m) this.#zoneClasses.set(e.rule, (m = new Map()));
    const isNew = !m.has(e.class);
    m.set(e.class, Math.max(0, (m.get(e.class) ?? 0) + (e.type === 'zone.entered' ? 1 : -1)));
    if (isNew && this.pub.settings.haDiscovery && this.#zoneIds().has(e.rule))
      this.#want(zoneConfig(this.#scope, e.rule, e.class));
  }

  #state(totals: CountTotals): void {
    for (const [id, l] of Object.entries(totals.lines)) {
      this.pub.retain(this.#t.line(id), JSON.stringify({ in: l.in, out: l.out, version: totals.version }));
    }
    for (const [id, z] of Object.entries(totals.zones)) {
      this.pub.retain(this.#t.zone(id, ALL), String(z.occupancy));
      const byClass = this.#zoneClasses.get(id);
      if (!byClass) continue;
      // After a rule change the engine recounts a zone without events: an empty zone is empty in every class.
      if (z.occupancy === 0) for (const c of byClass.keys()) byClass.set(c, 0);
      for (const [c, n] of byClass) this.pub.retain(this.#t.zone(id, c), String(n));
    }
  }

  #objects(frame: FrameOutput): void {
    const counts = new Map<string, number>();
    let all = 0;
    for (const r of frame.delta.results) {
      for (const t of r.targets) {
        counts.set(t.class, (counts.get(t.class) ?? 0) + 1);
        all++;
      }
    }
    for (const c of counts.keys()) {
      if (this.#objectClasses.has(c)) continue;
      this.#objectClasses.add(c);
      if (this.pub.settings.haDiscovery) this.#want(objectConfig(this.#scope, c));
    }
    for (const c of this.#objectClasses) this.pub.retain(this.#t.objects(c), String(counts.get(c) ?? 0));
    this.pub.retain(this.#t.objects(ALL), String(all));
  }

  #zoneIds(): Set<string> {
    return new Set((this.#rules?.zones ?? []).map((z) => z.id));
  }

  /** The rules in effect changed (or the task starts): the discovery configs follow them. */
  #setRules(rules: AnalyticsParameters | null, version: number, opening: boolean): void {
    this.#rulesVersion = version;
    this.#rules = rules;
    if (!this.pub.settings.haDiscovery) return;
    const next = new Map<string, DiscoveryConfig>();
    const add = (c: DiscoveryConfig) => next.set(c.topic, c);
    add(objectConfig(this.#scope));
    for (const c of this.#objectClasses) add(objectConfig(this.#scope, c));
    for (const l of rules?.lines ?? []) for (const c of lineConfigs(this.#scope, l.id)) add(c);
    for (const z of rules?.zones ?? []) {
      add(zoneConfig(this.#scope, z.id));
      for (const c of new Set([...(z.classes ?? []), ...(this.#zoneClasses.get(z.id)?.keys() ?? [])]))
        add(zoneConfig(this.#scope, z.id, c));
    }
    // A rule removed since (or, as the task starts, one an earlier task of this camera had): its configs go.
    const known = opening
      ? this.pub.retainedUnder(`${this.#scope.haPrefix}/sensor/${deviceId(this.#scope)}/`)
      : [...this.#configs.keys()];
    for (const topic of known) if (!next.has(topic)) this.pub.retain(topic, '', 'discovery');
    this.#configs = next;
    this.#discover();
    if (opening) {
      // A late subscriber reads the rules' state before their first count.
      for (const l of rules?.lines ?? [])
        this.pub.retain(this.#t.line(l.id), JSON.stringify({ in: 0, out: 0, version }));
      for (const z of rules?.zones ?? []) {
        this.pub.retain(this.#t.zone(z.id, ALL), '0');
        for (const c of z.classes ?? []) {
          let m = this.#zoneClasses.get(z.id);
          if (!m) this.#zoneClasses.set(z.id, (m = new Map()));
          m.set(c, 0);
          this.pub.retain(this.#t.zone(z.id, c), '0');
        }
      }
    }
  }

  #want(c: DiscoveryConfig): void {
    this.#configs.set(c.topic, c);
    this.pub.retain(c.topic, JSON.stringify(c.config), 'discovery');
  }

  /** Hands every wanted config over (unchanged ones coalesce in the publisher). */
  #discover(): void {
    for (const c of this.#configs.values()) this.pub.retain(c.topic, JSON.stringify(c.config), 'discovery');
  }
}
