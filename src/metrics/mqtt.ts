// MQTT publishing metrics (docs/mqtt.md): messages the broker acknowledged, messages dropped from the bounded
// queue while the broker could not be reached (drop-oldest, so a long outage costs the oldest events, never
// the pipeline's pace), and whether this process's client is connected now.
import { collected, metricsOn } from './registry.js';
import { ValueFamily } from './series.js';

const published = new ValueFamily(
  'sightflow_mqtt_published_total',
  'MQTT messages the broker acknowledged, by kind: event (analytics events), state (retained counts and totals), discovery (Home Assistant configs)',
);
const dropped = new ValueFamily(
  'sightflow_mqtt_dropped_total',
  'MQTT event messages dropped from the full queue while the broker could not be reached (the oldest first)',
);

let sources = 0;
let connected: () => number = () => 0;
collected(
  'sightflow_mqtt_connected',
  "Whether this process's MQTT client is connected to the broker (1) or not (0); absent when MQTT is off",
  'gauge',
  () => (sources > 0 ? [{ value: connected() }] : []),
);

export type MqttMessageKind = 'event' | 'state' | 'discovery';

export function countMqttPublished(kind: MqttMessageKind, n = 1): void {
  if (metricsOn) published.add({ kind }, n);
}

export function countMqttDropped(n = 1): void {
  if (metricsOn) dropped.add({}, n);
}

/** The process's publisher reports its connection at scrape time; returns the undo. */
export function watchMqtt(isConnected: () => boolean): () => void {
  sources++;
  connected = () => (isConnected() ? 1 : 0);
  return () => {
    sources--;
    if (sources === 0) connected = () => 0;
  };
}
