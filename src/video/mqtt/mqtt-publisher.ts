// This process's one MQTT connection (docs/mqtt.md): the worker's tasks hand it messages and never wait. npm
// `mqtt` speaks the protocol and reconnects; this file decides what waits while the broker is away:
// - retained state (availability, counts, totals, discovery configs) is kept as the latest payload per
//   topic, so an update coalesces with the one before it, and every topic is published again after each
//   (re)connect: a broker restarted without persistence has lost them, and a late subscriber reads the
//   state as it is now;
// - events (QoS 1, not retained) wait in a bounded queue that drops its oldest when full (counted in
//   sightflow_mqtt_dropped_total).
// At most WINDOW messages are handed to the client unacknowledged; npm `mqtt` keeps those and sends them
// again after a reconnect, so the memory held while the broker is down is the queue's bound plus WINDOW.
// Home Assistant announcing `online` on `<ha prefix>/status` republishes every discovery config and state.
import type { MqttClient } from 'mqtt';
import { randomBytes } from 'node:crypto';
import type { MqttSettings } from '../../config/index.js';
import type { Logger } from '../../base/log.js';
import { countMqttDropped, countMqttPublished, watchMqtt, type MqttMessageKind } from '../../metrics/mqtt.js';
import { DropOldestQueue } from './drop-oldest-queue.js';
import { topics, type Topics } from './mqtt-topics.js';

/** Messages handed to the client and not yet acknowledged; the rest wait here. */
const WINDOW = 64;
/** Pause between reconnect attempts. */
const RECONNECT_MS = 1000;
/** Longest a close waits for the last messages and the `offline` state to be acknowledged. */
const CLOSE_MS = 2000;
/** A connection error is logged once per this long, not once per reconnect attempt. */
const LOG_EVERY_MS = 60_000;

interface Retained {
  payload: string;
  kind: MqttMessageKind;
}
interface Queued {
  topic: string;
  payload: string;
}

export class MqttPublisher {
  readonly topics: Topics;
  #client: MqttClient | null = null;
  /** The client library's import and the connect that follows it (start). */
  #starting: Promise<void> | null = null;
  readonly #state = new Map<string, Retained>();
  /** Retained topics whose latest payload is not handed to the client yet, in the order they changed. */
  readonly #dirty = new Set<string>();
  readonly #events: DropOldestQueue<Queued>;
  #inFlight = 0;
  #closed = false;
  #loggedAt = 0;
  #unwatch: () => void = () => {};
  /** Tasks publishing for each camera now. */
  readonly #holders = new Map<string, number>();

  constructor(
    readonly settings: MqttSettings,
    private readonly log: Logger,
  ) {
    this.topics = topics(settings.topicPrefix);
    this.#events = new DropOldestQueue(settings.queueMessages);
    this.#state.set(this.topics.available, { payload: 'online', kind: 'state' });
  }

  /**
   * Connects (and keeps reconnecting until close); returns this at once. The client library is imported here,
   * not with the app, since most processes never publish; what is handed over before it connects waits, as it
   * does while the broker is away.
   */
  start(): this {
    if (this.#starting || this.#closed) return this;
    this.#starting = import('mqtt').then(
      ({ default: mqtt }) => {
        if (!this.#closed) this.#connect(mqtt);
      },
      (err: unknown) => this.log.error({ err }, 'the MQTT client library did not load; nothing is published'),
    );
    return this;
  }

  #connect(mqtt: typeof import('mqtt').default): void {
    const settings = this.settings;
    this.#client = mqtt.connect(settings.url, {
      clientId: settings.clientId ?? `sightflow_${randomBytes(6).toString('hex')}`,
      username: settings.username,
      password: settings.password,
      clean: true,
      reconnectPeriod: RECONNECT_MS,
      connectTimeout: 5000,
      will: { topic: this.topics.available, payload: Buffer.from('offline'), qos: 1, retain: true },
      // Only what this file hands over while connected reaches the client's own offline queue.
      queueQoSZero: false,
    });
    this.#client.on('connect', () => this.#onConnect());
    this.#client.on('error', (e) => this.#warn(e, 'MQTT connection failed; reconnecting'));
    this.#client.on('message', (topic, payload) => {
      if (topic === this.#haStatusTopic && payload.toString().trim() === 'online') this.#republish();
    });
    this.#unwatch = watchMqtt(() => this.connected);
  }

  get connected(): boolean {
    return this.#client?.connected ?? false;
  }

  /** Events waiting for the broker (not counting the ones in flight). */
  get queued(): number {
    return this.#events.size;
  }

  /** Nothing waiting, to be sent again or unacknowledged: every message handed over has reached the broker. */
  get settled(): boolean {
    return this.#inFlight === 0 && this.#dirty.size === 0 && this.#events.size === 0;
  }

  get #haStatusTopic(): string {
    return `${this.settings.haPrefix}/status`;
  }

  /** The retained payload of a topic from now on ('' removes a retained message, e.g. a discovery config). */
  retain(topic: string, payload: string, kind: MqttMessageKind = 'state'): void {
    if (this.#closed) return;
    const prev = this.#state.get(topic);
    if (prev && prev.payload === payload) return;
    this.#state.set(topic, { payload, kind });
    this.#dirty.add(topic);
    this.#pump();
  }

  /** One event message (QoS 1, not retained) to each topic. */
  event(topicList: readonly string[], payload: string): void {
    if (this.#closed) return;
    for (const topic of topicList) {
      const dropped = this.#events.push({ topic, payload });
      if (dropped > 0) countMqttDropped(dropped);
    }
    this.#pump();
  }

  /**
   * The camera's availability is `online` while at least one task holds it; returns the release, after
   * which (once every holder released it) it is `offline`.
   */
  holdCamera(camera: string): () => void {
    const topic = this.topics.camera(camera).available;
    this.#holders.set(camera, (this.#holders.get(camera) ?? 0) + 1);
    this.retain(topic, 'online');
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#holders.get(camera) ?? 1) - 1;
      if (n > 0) {
        this.#holders.set(camera, n);
        return;
      }
      this.#holders.delete(camera);
      this.retain(topic, 'offline');
    };
  }

  /** Retained topics given here that start with `prefix` and are not cleared (a device's discovery configs). */
  retainedUnder(prefix: string): string[] {
    return [...this.#state].filter(([t, r]) => t.startsWith(prefix) && r.payload !== '').map(([t]) => t);
  }

  /** Publishes `offline` and what is still waiting (within a short time), then disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#starting;
    this.retain(this.topics.available, 'offline');
    const deadline = Date.now() + CLOSE_MS;
    while (this.connected && !this.settled && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    this.#closed = true;
    this.#unwatch();
    await this.#client?.endAsync(!this.connected).catch(() => {});
  }

  #onConnect(): void {
    if (this.settings.haDiscovery) {
      this.#client!.subscribe(this.#haStatusTopic, { qos: 1 }, (e) => {
        if (e) this.#warn(e, "MQTT subscription to Home Assistant's status failed");
      });
    }
    this.#markAll();
    this.#pump();
  }

  #republish(): void {
    this.#markAll();
    this.#pump();
  }

  /** Every retained topic is sent again: discovery configs first, so their entities exist when states arrive. */
  #markAll(): void {
    const discovery = [...this.#state].filter(([, r]) => r.kind === 'discovery').map(([t]) => t);
    const rest = [...this.#state].filter(([, r]) => r.kind !== 'discovery').map(([t]) => t);
    this.#dirty.clear();
    for (const t of [...discovery, ...rest]) this.#dirty.add(t);
  }

  #pump(): void {
    const client = this.#client;
    while (!this.#closed && client?.connected && this.#inFlight < WINDOW) {
      const ev = this.#events.shift();
      if (ev) {
        this.#send(ev.topic, ev.payload, false, 'event');
        continue;
      }
      const topic = this.#dirty.values().next().value as string | undefined;
      if (topic === undefined) return;
      this.#dirty.delete(topic);
      const r = this.#state.get(topic)!;
      this.#send(topic, r.payload, true, r.kind);
    }
  }

  #send(topic: string, payload: string, retain: boolean, kind: MqttMessageKind): void {
    this.#inFlight++;
    this.#client!.publish(topic, payload, { qos: 1, retain }, (e) => {
      this.#inFlight--;
      if (!e) countMqttPublished(kind);
      // The client keeps an unacknowledged message across reconnects; an error means it was given up
      // (the client is ending): retained state is sent again on the next connect, an event is lost.
      this.#pump();
    });
  }

  #warn(e: Error, msg: string): void {
    if (Date.now() - this.#loggedAt < LOG_EVERY_MS) return;
    this.#loggedAt = Date.now();
    this.log.warn({ err: e, broker: this.settings.url }, msg);
  }
}
