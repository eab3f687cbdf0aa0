// The process's MQTT publisher against a real mosquitto on loopback: retained availability with a last will,
// events queued while the broker is down and delivered after it is back (none lost under the bound), the
// oldest dropped and counted past it with the retained state right again after the reconnect, Home
// Assistant's `online` republishing every discovery config, and the settings parsed from the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, ConfigError } from '../../../src/config/index.js';
import { createLogger } from '../../../src/base/log.js';
import { enableMetrics, renderMetrics } from '../../../src/metrics/registry.js';
import { projectRoot } from '../../../src/base/paths.js';
import { DropOldestQueue } from '../../../src/video/mqtt/drop-oldest-queue.js';
import { MqttPublisher } from '../../../src/video/mqtt/mqtt-publisher.js';
import { mosquittoMissing, startBroker, subscribe } from '../../helpers/mosquitto.js';
import {
  announceOnline,
  connected,
  disconnected,
  mqttSettings as settings,
  publisherOnBroker,
} from '../../helpers/mqtt-publishing.js';
import { scriptArgs } from '../../helpers/node-script.js';

const skip = mosquittoMissing();
const log = createLogger('silent');

async function metric(name: string): Promise<number> {
  const { body } = await renderMetrics(undefined);
  let sum = 0;
  for (const line of body.split('\n'))
    if (line.startsWith(name) && /^[a-z_]+(\{[^}]*\})? /.test(line) && line.split(/[ {]/)[0] === name)
      sum += Number(line.split(' ').pop());
  return sum;
}

test('the drop-oldest queue keeps the newest `bound` items in order and reports each drop', () => {
  const q = new DropOldestQueue<number>(3);
  assert.deepEqual(
    [1, 2, 3].map((n) => q.push(n)),
    [0, 0, 0],
  );
  assert.equal(q.push(4), 1);
  assert.equal(q.push(5), 1);
  assert.deepEqual(q.toArray(), [3, 4, 5]);
  assert.equal(q.shift(), 3);
  assert.equal(q.push(6), 0);
  assert.deepEqual(q.toArray(), [4, 5, 6]);
  assert.deepEqual([q.shift(), q.shift(), q.shift(), q.shift()], [4, 5, 6, undefined]);
  assert.equal(q.size, 0);
  q.push(7);
  assert.deepEqual(q.toArray(), [7]);
  assert.throws(() => new DropOldestQueue(0), RangeError);
});

test('SIGHTFLOW_MQTT_*: URL credentials and client id, defaults, and bad values named', () => {
  assert.equal(loadConfig({}).mqtt, null);
  const c = loadConfig({
    SIGHTFLOW_MQTT_URL: 'mqtts://user%40x:p%3Ass@broker.local:8883?client_id=cam-node-1',
    SIGHTFLOW_MQTT_TOPIC_PREFIX: 'site/a',
  }).mqtt!;
  assert.deepEqual(c, {
    url: 'mqtts://broker.local:8883',
    username: 'user@x',
    password: 'p:ss',
    clientId: 'cam-node-1',
    topicPrefix: 'site/a',
    haDiscovery: true,
    haPrefix: 'homeassistant',
    queueMessages: 10_000,
  });
  assert.equal(
    loadConfig({ SIGHTFLOW_MQTT_URL: 'mqtt://h', SIGHTFLOW_MQTT_HA_DISCOVERY: 'false' }).mqtt!.haDiscovery,
    false,
  );
  for (const [env, name] of [
    [{ SIGHTFLOW_MQTT_URL: 'http://h:1883' }, 'SIGHTFLOW_MQTT_URL'],
    [{ SIGHTFLOW_MQTT_URL: 'mqtt://u:secret@' }, 'SIGHTFLOW_MQTT_URL'],
    [{ SIGHTFLOW_MQTT_TOPIC_PREFIX: 'a/+/b' }, 'SIGHTFLOW_MQTT_TOPIC_PREFIX'],
    [{ SIGHTFLOW_MQTT_TOPIC_PREFIX: 'a//b' }, 'SIGHTFLOW_MQTT_TOPIC_PREFIX'],
    [{ SIGHTFLOW_MQTT_HA_PREFIX: '$SYS' }, 'SIGHTFLOW_MQTT_HA_PREFIX'],
    [{ SIGHTFLOW_MQTT_QUEUE_MESSAGES: '0' }, 'SIGHTFLOW_MQTT_QUEUE_MESSAGES'],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.variable === name && !e.message.includes('secret'),
      JSON.stringify(env),
    );
  }
});

test('availability is retained with a last will; a camera is online while a task holds it', { skip }, async () => {
  const { broker, s, pub, close } = await publisherOnBroker();
  try {
    const release = pub.holdCamera('door');
    const release2 = pub.holdCamera('door');
    const sub = await subscribe(broker.url, [`${s.topicPrefix}/#`]);
    await sub.until(
      (m) => m.some((x) => x.topic === `${s.topicPrefix}/door/available` && x.payload === 'online' && x.retain),
      5000,
      'retained camera online',
    );
    assert.ok(sub.on(`${s.topicPrefix}/available`).some((x) => x.payload === 'online' && x.retain));
    release();
    release2();
    release2();
    await sub.until(
      (m) => m.some((x) => x.topic === `${s.topicPrefix}/door/available` && x.payload === 'offline'),
      5000,
      'camera offline',
    );
    assert.equal(
      sub.on(`${s.topicPrefix}/door/available`).filter((x) => x.payload === 'offline').length,
      1,
      'offline once, after the last holder',
    );
    await sub.close();
  } finally {
    await close();
  }
});

test('a process that dies leaves `offline` on its availability topic (the last will)', { skip }, async () => {
  const broker = await startBroker();
  const prefix = `t${Math.random().toString(16).slice(2, 8)}`;
  const child = spawn(
    process.execPath,
    [...scriptArgs(fileURLToPath(new URL('./fixtures/publisher-process.ts', import.meta.url))), broker.url, prefix],
    { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const sub = await subscribe(broker.url, [`${prefix}/#`]);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (b: Buffer) => {
        if (b.toString().includes('ready')) resolve();
      });
      child.once('exit', () => reject(new Error('the publisher process exited')));
    });
    await sub.until(
      (m) => m.some((x) => x.topic === `${prefix}/door/available` && x.payload === 'online'),
      5000,
      'camera online',
    );
    child.kill('SIGKILL');
    await sub.until(
      (m) => m.some((x) => x.topic === `${prefix}/available` && x.payload === 'offline'),
      5000,
      'the will',
    );
    const late = await subscribe(broker.url, [`${prefix}/available`]);
    await late.until((m) => m.some((x) => x.retain && x.payload === 'offline'), 5000, 'the will, retained');
    await Promise.all([sub.close(), late.close()]);
  } finally {
    child.kill('SIGKILL');
    await broker.close();
  }
});

test('credentials and client id from SIGHTFLOW_MQTT_URL reach a broker that requires them; a wrong password never connects', {
  skip,
}, async () => {
  const broker = await startBroker({ users: { cam: 'p@ss:w0rd' } });
  const url = new URL(broker.url);
  const good = loadConfig({
    SIGHTFLOW_MQTT_URL: `mqtt://cam:${encodeURIComponent('p@ss:w0rd')}@${url.host}?client_id=sightflow-node-7`,
    SIGHTFLOW_MQTT_TOPIC_PREFIX: 'authed',
  }).mqtt!;
  const bad = loadConfig({ SIGHTFLOW_MQTT_URL: `mqtt://cam:wrong@${url.host}`, SIGHTFLOW_MQTT_TOPIC_PREFIX: 'refused' })
    .mqtt!;
  const pubs = [new MqttPublisher(good, log).start(), new MqttPublisher(bad, log).start()];
  try {
    await connected(pubs[0]!);
    const sub = await subscribe(broker.url, ['#'], { username: 'cam', password: 'p@ss:w0rd' });
    await sub.until(
      (m) => m.some((x) => x.topic === 'authed/available' && x.payload === 'online'),
      5000,
      'the authenticated publisher',
    );
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(pubs[1]!.connected, false);
    assert.ok(!sub.messages.some((x) => x.topic.startsWith('refused/')));
    await sub.close();
  } finally {
    await Promise.all(pubs.map((p) => p.close()));
    await broker.close();
  }
});

test("mqtts: the broker's certificate is checked (trusted through NODE_EXTRA_CA_CERTS: connects; unknown: never)", {
  skip,
}, async () => {
  const broker = await startBroker({ tls: true });
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-mqtts-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, broker.cert!);
  const fixture = fileURLToPath(new URL('./fixtures/publisher-process.ts', import.meta.url));
  const ready = (env: NodeJS.ProcessEnv, waitMs: number) =>
    new Promise<boolean>((resolve) => {
      const child = spawn(process.execPath, [...scriptArgs(fixture), broker.url, 'tls'], {
        cwd: projectRoot,
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(false);
      }, waitMs);
      child.stdout!.on('data', (b: Buffer) => {
        if (b.toString().includes('ready')) {
          clearTimeout(timer);
          child.kill('SIGKILL');
          resolve(true);
        }
      });
    });
  try {
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    assert.equal(await ready({ ...env, NODE_EXTRA_CA_CERTS: ca }, 30_000), true, 'connected with the CA trusted');
    assert.equal(await ready(env, 4000), false, 'an unknown certificate is refused');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await broker.close();
  }
});

test('broker restarted mid-stream: no event lost under the bound (after de-duplication); retained state republished', {
  skip,
}, async () => {
  enableMetrics({ projectLabel: true });
  const broker = await startBroker({ persistent: true });
  const s = settings(broker.url);
  const pub = new MqttPublisher(s, log).start();
  // A persistent session: the broker keeps it (and queues for it) across its own restart.
  const sub = await subscribe(broker.url, [`${s.topicPrefix}/events`], {
    clientId: `sub_${s.topicPrefix}`,
    persistent: true,
  });
  try {
    await connected(pub);
    const droppedBefore = await metric('sightflow_mqtt_dropped_total');
    let n = 0;
    const send = (k: number) => {
      for (let i = 0; i < k; i++, n++) pub.event([`${s.topicPrefix}/events`], JSON.stringify({ id: `e${n}` }));
    };
    send(200);
    await broker.stop();
    await disconnected(pub);
    send(300); // while the broker is down: queued, never blocking
    assert.ok(pub.queued >= 300 - 64, `queued ${pub.queued}`);
    pub.retain(`${s.topicPrefix}/cam/lines/l1`, JSON.stringify({ in: 5, out: 2, version: 1 }));
    await broker.start();
    send(100);
    await sub.until((m) => new Set(m.map((x) => JSON.parse(x.payload).id)).size === 600, 20_000, 'all 600 events');
    const ids = new Set(sub.messages.map((x) => JSON.parse(x.payload).id));
    for (let i = 0; i < 600; i++) assert.ok(ids.has(`e${i}`), `e${i}`);
    assert.equal(await metric('sightflow_mqtt_dropped_total'), droppedBefore, 'nothing dropped under the bound');
    const late = await subscribe(broker.url, [`${s.topicPrefix}/cam/#`]);
    await late.until(
      (m) => m.some((x) => x.retain && x.payload === JSON.stringify({ in: 5, out: 2, version: 1 })),
      5000,
      'retained line totals',
    );
    await late.close();
  } finally {
    await sub.close();
    await pub.close();
    await broker.close();
  }
});

test('past the bound the oldest events are dropped and counted; a fresh broker gets the retained state again', {
  skip,
}, async () => {
  enableMetrics({ projectLabel: true });
  const { broker, s, pub, close } = await publisherOnBroker({ queueMessages: 50 });
  try {
    pub.retain(`${s.topicPrefix}/cam/zones/z1/all`, '3');
    const droppedBefore = await metric('sightflow_mqtt_dropped_total');
    await broker.stop();
    await disconnected(pub);
    for (let i = 0; i < 250; i++) pub.event([`${s.topicPrefix}/events`], JSON.stringify({ id: `e${i}` }));
    assert.equal(pub.queued, 50);
    assert.equal((await metric('sightflow_mqtt_dropped_total')) - droppedBefore, 200);
    assert.equal(await metric('sightflow_mqtt_connected'), 0);
    pub.retain(`${s.topicPrefix}/cam/zones/z1/all`, '4');
    // Without persistence the restarted broker knows no retained message: the publisher sends them again (after
    // the queued events). A subscriber that comes once it has sent everything reads them from the broker's own
    // store, with the retain flag: one subscribed while they were still on their way would get them live, flagged
    // as not retained.
    await broker.start({ fresh: true });
    await connected(pub);
    for (const end = Date.now() + 5000; !pub.settled; ) {
      assert.ok(Date.now() < end, `the publisher sent what waited (${pub.queued} events left)`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const late = await subscribe(broker.url, [`${s.topicPrefix}/#`]);
    try {
      await late.until(
        (m) => m.some((x) => x.topic === `${s.topicPrefix}/cam/zones/z1/all` && x.payload === '4' && x.retain),
        5000,
        'retained occupancy',
      );
      assert.ok(late.on(`${s.topicPrefix}/available`).some((x) => x.payload === 'online' && x.retain));
      assert.equal(await metric('sightflow_mqtt_connected'), 1);
    } finally {
      // A subscriber left open keeps the test's process alive after a failure.
      await late.close();
    }
  } finally {
    await close();
  }
});

test('Home Assistant announcing online gets every discovery config again within 2 s; a cleared config stays cleared', {
  skip,
}, async () => {
  const { broker, s, pub, close } = await publisherOnBroker();
  try {
    const topics = Array.from({ length: 20 }, (_, i) => `homeassistant/sensor/${s.topicPrefix}_cam/x${i}/config`);
    for (const t of topics)
      pub.retain(t, JSON.stringify({ state_topic: `${s.topicPrefix}/cam/x`, unique_id: t }), 'discovery');
    pub.retain(topics[0]!, '', 'discovery');
    const ha = await subscribe(broker.url, [`homeassistant/sensor/${s.topicPrefix}_cam/#`]);
    await ha.until((m) => m.length >= 19, 5000, 'retained configs');
    assert.ok(!ha.messages.some((x) => x.topic === topics[0]), 'a cleared config is not retained');
    await announceOnline(
      ha,
      (m) => topics.slice(1).every((t) => m.some((x) => x.topic === t && x.payload.length > 0)),
      'configs republished',
    );
    await ha.close();
  } finally {
    await close();
  }
});
