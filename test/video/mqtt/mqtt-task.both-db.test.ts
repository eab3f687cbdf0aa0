// A task that asks for `publish.mqtt`, through the real API and worker into a real mosquitto on loopback (on
// PGlite and on PostgreSQL):
// tracks cross a line 12 times in and 9 out; the broker's events are exactly the stream's (same ids, the
// stream offset of each one's chunk) and the retained totals equal GET .../analytics, also for a subscriber
// that connects late; a broker restart mid-task loses no event (after de-duplication by id); an outage past
// the queue's bound drops events, counts them, and the retained state is right again after the reconnect;
// rules changed by PUT while it runs change the camera's Home Assistant sensors; a bad `publish` is a 400
// naming the field, and a server without a broker refuses publish.mqtt.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../../helpers/app.js';
import { FAST, chunksOf, readStream, startVideoApp, waitStatus } from '../../helpers/video-tasks.js';
import { CrossingProvider, crossingRules } from '../../helpers/crossing-provider.js';
import { mosquittoMissing, startBroker, subscribe, type Broker, type Subscriber } from '../../helpers/mosquitto.js';
import { parseExposition, sampleSum, scrape } from '../../helpers/metrics-text.js';
import { VideoWorker } from '../../../src/video/worker/worker.js';
import { videoRooms } from '../../../src/video/video.module.js';
import { MqttPublisher } from '../../../src/video/mqtt/mqtt-publisher.js';

const skip = mosquittoMissing();
const PREFIX = 'sf_task_test';
const RULES = crossingRules(['person']);
const task = (camera: string, query = '', extra: Record<string, unknown> = {}) => ({
  input: [{ type: 'video_url', url: `http://127.0.0.1:9/cam.mp4?${query}` }],
  steps: [
    { model: 'detect', parameters: { classes: ['person', 'dog'] } },
    { model: 'analytics', parameters: RULES },
  ],
  publish: { mqtt: { camera } },
  ...extra,
});

let broker: Broker;
let t: TestApp;

before(async () => {
  if (skip) return;
  broker = await startBroker({ persistent: true });
  t = await startVideoApp({
    SIGHTFLOW_MQTT_URL: broker.url,
    SIGHTFLOW_MQTT_TOPIC_PREFIX: PREFIX,
    SIGHTFLOW_METRICS_PORT: '0',
  });
});
after(async () => {
  await t?.close();
  await broker?.close();
});

/** A worker with its own MQTT connection (`queueMessages`: the bound under test). */
async function startPublishingWorker(
  queueMessages?: number,
): Promise<{ worker: VideoWorker; pub: MqttPublisher; stop(): Promise<void> }> {
  const s = t.app.services;
  const pub = new MqttPublisher({ ...s.config.mqtt!, ...(queueMessages ? { queueMessages } : {}) }, s.log).start();
  const worker = new VideoWorker(s, {
    ...videoRooms(s),
    providers: () => [new CrossingProvider()],
    settings: FAST,
    mqtt: pub,
  });
  worker.start();
  const end = Date.now() + 10_000;
  while (!pub.connected && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return {
    worker,
    pub,
    async stop() {
      await worker.stop();
      await pub.close();
    },
  };
}

async function post(json: unknown): Promise<string> {
  const r = await api(t, '/v1/video/process', { method: 'POST', json });
  assert.equal(r.status, 202, r.text);
  return r.body.id;
}

/** Every analytics event of a finished task's stream, in order, with its chunk's start offset. */
async function streamEvents(id: string): Promise<Array<{ id: string; offset: number }>> {
  const { bytes } = await readStream(t, id);
  const out: Array<{ id: string; offset: number }> = [];
  let at = 0;
  for (const ev of bytes.toString('utf8').split('\n\n').slice(0, -1)) {
    const size = Buffer.byteLength(ev, 'utf8') + 2;
    if (ev.startsWith('data: {'))
      for (const e of JSON.parse(ev.slice(6)).analytics?.events ?? []) out.push({ id: e.id, offset: at });
    at += size;
  }
  return out;
}

const eventsOf = (sub: Subscriber, camera: string) =>
  sub.on(`${PREFIX}/${camera}/events`).map((m) => JSON.parse(m.payload));
const latest = (sub: Subscriber, topic: string) => sub.on(topic).at(-1)?.payload;

test("12 in, 9 out: exactly the stream's events (same ids, their chunks' offsets); retained totals equal GET analytics, for a late subscriber too", {
  skip,
}, async () => {
  const w = await startPublishingWorker();
  const sub = await subscribe(broker.url, [`${PREFIX}/#`]);
  try {
    const id = await post(task('front', 'ins=12&outs=9&frame_ms=5'));
    await waitStatus(t, id, ['succeeded']);
    const stream = await streamEvents(id);
    assert.ok(stream.length > 21, `${stream.length} events in the stream`);
    await sub.until(
      (m) => m.filter((x) => x.topic === `${PREFIX}/front/events`).length >= stream.length,
      10_000,
      "the task's events",
    );
    const got = eventsOf(sub, 'front');
    assert.deepEqual(
      got.map((e) => e.id),
      stream.map((e) => e.id),
      'the same events in the same order',
    );
    assert.deepEqual(
      sub.on(`${PREFIX}/events`).map((m) => JSON.parse(m.payload).id),
      stream.map((e) => e.id),
    );
    const closing = new Set(
      chunksOf((await readStream(t, id)).bytes)
        .at(-1)
        .analytics.events.map((e: any) => e.id),
    );
    for (const [i, e] of got.entries()) {
      assert.equal(e.task_id, id);
      assert.equal(e.camera, 'front');
      // A replay from a frame event's offset starts with its chunk; a closing event's is where the terminal chunk starts.
      if (!closing.has(e.id)) assert.equal(e.stream_offset, stream[i]!.offset, e.id);
      else assert.ok(e.stream_offset <= stream[i]!.offset, e.id);
    }
    const first = got.find((e) => e.type === 'line.crossed')!;
    const replay = chunksOf((await readStream(t, id, { offset: first.stream_offset, via: 'query' })).bytes);
    assert.ok(
      replay[0].analytics.events.some((e: any) => e.id === first.id),
      "the replay from stream_offset starts with the event's chunk",
    );
    const crossings = got.filter((e) => e.type === 'line.crossed');
    assert.deepEqual(
      [crossings.filter((e) => e.direction === 'in').length, crossings.filter((e) => e.direction === 'out').length],
      [12, 9],
    );
    assert.deepEqual(crossings.at(-1).rule_totals, { in: 12, out: 9 });
    const totals = (await api(t, `/v1/video/tasks/${id}/analytics`)).body.totals;
    assert.deepEqual([totals.lines.door.in, totals.lines.door.out], [12, 9]);
    await sub.until(() => latest(sub, `${PREFIX}/front/available`) === 'offline', 5000, 'the camera offline');
    // A subscriber that connects now reads the totals as GET analytics has them.
    const late = await subscribe(broker.url, [`${PREFIX}/front/#`]);
    await late.until(
      (m) =>
        m.some((x) => x.topic === `${PREFIX}/front/lines/door`) &&
        m.some((x) => x.topic === `${PREFIX}/front/zones/hall/all`),
      5000,
      'retained state',
    );
    assert.deepEqual(JSON.parse(latest(late, `${PREFIX}/front/lines/door`)!), {
      in: totals.lines.door.in,
      out: totals.lines.door.out,
      version: totals.version,
    });
    assert.equal(latest(late, `${PREFIX}/front/zones/hall/all`), String(totals.zones.hall.occupancy));
    assert.equal(latest(late, `${PREFIX}/front/zones/hall/person`), '0');
    assert.equal(latest(late, `${PREFIX}/front/objects/all`), '0');
    await late.close();
    // Home Assistant's device for the camera: its line counters and zone sensor.
    const ha = await subscribe(broker.url, [`homeassistant/sensor/${PREFIX}_front/#`]);
    await ha.until(
      (m) =>
        ['line_door_in', 'line_door_out', 'zone_hall_all', 'zone_hall_person'].every((o) =>
          m.some((x) => x.topic.endsWith(`/${o}/config`)),
        ),
      5000,
      'discovery configs',
    );
    await ha.close();
  } finally {
    await sub.close();
    await w.stop();
  }
});

test('mosquitto restarted mid-task: after de-duplication by id no event is lost', { skip }, async () => {
  const w = await startPublishingWorker();
  // A persistent session on a persistent broker: what is published while this subscriber is away waits for it.
  const sub = await subscribe(broker.url, [`${PREFIX}/back/events`], { clientId: 'sf_restart_sub', persistent: true });
  try {
    const id = await post(task('back', 'ins=12&outs=9&frame_ms=40'));
    await sub.until((m) => m.length >= 3, 20_000, 'the first events');
    await broker.stop();
    await new Promise((r) => setTimeout(r, 700));
    await broker.start();
    assert.equal(
      (await api(t, `/v1/video/tasks/${id}`)).body.status,
      'streaming',
      'the broker was back before the task ended',
    );
    await waitStatus(t, id, ['succeeded']);
    const stream = await streamEvents(id);
    const want = new Set(stream.map((e) => e.id));
    await sub.until(
      (m) => new Set(m.map((x) => JSON.parse(x.payload).id)).size >= want.size,
      20_000,
      'every event after the restart',
    );
    const got = new Set(eventsOf(sub, 'back').map((e) => e.id));
    assert.deepEqual([...got].sort(), [...want].sort());
  } finally {
    await sub.close();
    await w.stop();
  }
});

test("an outage past the queue's bound: drops counted; retained totals right again after the reconnect", {
  skip,
}, async () => {
  const w = await startPublishingWorker(6);
  try {
    const dropped = async () =>
      sampleSum(parseExposition((await scrape(t.app.metricsPort!)).text), 'sightflow_mqtt_dropped_total');
    const before = await dropped();
    await broker.stop();
    const end = Date.now() + 10_000;
    while (w.pub.connected && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const id = await post(task('side', 'ins=12&outs=9&frame_ms=2'));
    await waitStatus(t, id, ['succeeded']);
    const stream = await streamEvents(id);
    // Two messages an event (all cameras' topic and the camera's), six kept.
    assert.equal((await dropped()) - before, 2 * stream.length - 6);
    // A broker that lost everything it had (no persistence file): the retained state is published again.
    await broker.start({ fresh: true });
    const totals = (await api(t, `/v1/video/tasks/${id}/analytics`)).body.totals;
    const late = await subscribe(broker.url, [`${PREFIX}/side/#`]);
    await late.until((m) => m.some((x) => x.topic === `${PREFIX}/side/lines/door`), 10_000, 'retained line totals');
    assert.deepEqual(JSON.parse(latest(late, `${PREFIX}/side/lines/door`)!), {
      in: totals.lines.door.in,
      out: totals.lines.door.out,
      version: totals.version,
    });
    assert.deepEqual([totals.lines.door.in, totals.lines.door.out], [12, 9]);
    assert.equal(latest(late, `${PREFIX}/side/available`), 'offline');
    await late.close();
  } finally {
    await w.stop();
  }
});

test("rules changed by PUT while the task runs: the removed line's Home Assistant configs are cleared, the new line's appear", {
  skip,
}, async () => {
  const w = await startPublishingWorker();
  const node = `homeassistant/sensor/${PREFIX}_gatecam`;
  const ha = await subscribe(broker.url, [`${node}/#`]);
  try {
    const id = await post(task('gatecam', 'ins=12&outs=9&frame_ms=40'));
    await ha.until(
      (m) => m.some((x) => x.topic === `${node}/line_door_in/config` && x.payload.length > 0),
      20_000,
      "the door line's config",
    );
    const rules = {
      lines: [
        {
          id: 'gate',
          points: [
            [200, 0],
            [200, 480],
          ],
        },
      ],
      zones: RULES.zones,
    };
    const put = await api(t, `/v1/video/tasks/${id}/analytics`, { method: 'PUT', json: { parameters: rules } });
    assert.equal(put.status, 200, put.text);
    for (const gone of ['line_door_in', 'line_door_out']) {
      await ha.until(
        (m) => m.filter((x) => x.topic === `${node}/${gone}/config`).at(-1)?.payload === '',
        20_000,
        `${gone} cleared`,
      );
    }
    for (const added of ['line_gate_in', 'line_gate_out']) {
      await ha.until(
        (m) => (m.filter((x) => x.topic === `${node}/${added}/config`).at(-1)?.payload ?? '').length > 0,
        20_000,
        `${added} published`,
      );
    }
    assert.equal((await api(t, `/v1/video/tasks/${id}`)).body.status, 'streaming', 'changed while the task ran');
    // The zone kept its sensor.
    assert.ok(!ha.messages.some((x) => x.topic === `${node}/zone_hall_all/config` && x.payload === ''));
    await waitStatus(t, id, ['succeeded']);
  } finally {
    await ha.close();
    await w.stop();
  }
});

test('publish: a bad camera or field is a 400 naming it; the OpenAPI document describes it', { skip }, async () => {
  for (const [publish, param] of [
    [{ mqtt: { camera: 'front door' } }, 'publish.mqtt.camera'],
    [{ mqtt: { camera: '' } }, 'publish.mqtt.camera'],
    [{ mqtt: { camera: 'x'.repeat(65) } }, 'publish.mqtt.camera'],
    [{ mqtt: {} }, 'publish.mqtt.camera'],
    [{ mqtt: { camera: 'a', qos: 2 } }, 'publish.mqtt.qos'],
    [{ kafka: {} }, 'publish.kafka'],
    ['mqtt', 'publish'],
  ] as const) {
    const r = await api(t, '/v1/video/process', { method: 'POST', json: { ...task('x'), publish } });
    assert.equal(r.status, 400, `${JSON.stringify(publish)}: ${r.text}`);
    assert.equal(r.body.error.type, 'invalid_request_error');
    assert.equal(r.body.error.param, param, JSON.stringify(r.body));
    assert.ok(r.body.error.message.startsWith(`Invalid body field ${param}: `), r.body.error.message);
    if (param === 'publish.mqtt.camera')
      assert.match(
        r.body.error.message,
        /Expected a camera name of 1-64 letters, digits, "_" or "-" for publish\.mqtt\.camera but received/,
      );
  }
  const doc = (await api(t, '/openapi.json')).body;
  const text = JSON.stringify(doc);
  assert.ok(text.includes('publish.mqtt') || text.includes('"publish"'), 'the document names publish');
  assert.ok(text.includes('docs/mqtt.md'));
});

test('a server without a broker refuses publish.mqtt with a 400', { skip }, async () => {
  const plain = await startVideoApp();
  try {
    const r = await api(plain, '/v1/video/process', { method: 'POST', json: task('front') });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'invalid_parameter');
    assert.equal(r.body.error.param, 'publish.mqtt');
    assert.match(r.body.error.message, /SIGHTFLOW_MQTT_URL/);
  } finally {
    await plain.close();
  }
});
