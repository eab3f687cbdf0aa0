// The MQTT tests' side of the process's publisher: its settings for a test broker (a topic prefix of its own,
// so tests sharing a broker do not read each other's retained state) and waits on its connection.
import assert from 'node:assert/strict';
import type { MqttSettings } from '../../src/config/index.js';
import { createLogger } from '../../src/base/log.js';
import { MqttPublisher } from '../../src/video/mqtt/mqtt-publisher.js';
import { startBroker, type Broker, type Subscriber } from './mosquitto.js';

export function mqttSettings(url: string, over: Partial<MqttSettings> = {}): MqttSettings {
  return {
    url,
    topicPrefix: `t${Math.random().toString(16).slice(2, 8)}`,
    haDiscovery: true,
    haPrefix: 'homeassistant',
    queueMessages: 1000,
    ...over,
  };
}

async function until(p: MqttPublisher, connected: boolean, poll: number, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (p.connected !== connected) {
    if (Date.now() > end) throw new Error(what);
    await new Promise((r) => setTimeout(r, poll));
  }
}

/** Resolves once the publisher is connected (throws after 10 s). */
export const connected = (p: MqttPublisher) => until(p, true, 20, 'publisher did not connect');

/** Resolves once the publisher has noticed the broker is gone (throws after 10 s). */
export const disconnected = (p: MqttPublisher) => until(p, false, 5, 'publisher did not notice the broker stopped');

/**
 * Home Assistant restarts: `ha` forgets what it has received, announces `online` and waits until
 * `republished` holds over what comes after, asserting that it came within 2 s.
 */
export async function announceOnline(
  ha: Subscriber,
  republished: (m: Subscriber['messages']) => boolean,
  what: string,
): Promise<void> {
  ha.messages.length = 0;
  const t0 = Date.now();
  await ha.client.publishAsync('homeassistant/status', 'online', { qos: 1 });
  await ha.until(republished, 2000, what);
  assert.ok(Date.now() - t0 <= 2000);
}

export interface PublisherOnBroker {
  broker: Broker;
  s: MqttSettings;
  pub: MqttPublisher;
  /** Closes the publisher, then the broker. */
  close(): Promise<void>;
}

/** A broker of its own and a (silent) publisher connected to it, with `over` in its settings. */
export async function publisherOnBroker(over: Partial<MqttSettings> = {}): Promise<PublisherOnBroker> {
  const broker = await startBroker();
  const s = mqttSettings(broker.url, over);
  const pub = new MqttPublisher(s, createLogger('silent')).start();
  const close = async () => {
    await pub.close();
    await broker.close();
  };
  try {
    await connected(pub);
  } catch (e) {
    await close();
    throw e;
  }
  return { broker, s, pub, close };
}
