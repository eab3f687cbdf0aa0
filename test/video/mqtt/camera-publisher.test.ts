// One task's MQTT publishing fed by the real analytics engine (synthetic tracks: 12 crossings in, 9 out, and
// visits to a zone) into a real mosquitto: exactly the engine's events one for one with the counts right
// after each, retained totals equal to the engine's, per-class zone occupancy, object counts, and Home
// Assistant discovery configs that use only the MQTT sensor platform's documented keys, follow a rule change
// (a removed rule's configs cleared) and come back when Home Assistant announces `online`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyticsEngine, AnalyticsFrame } from '../../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../../src/video/analytics/rules.js';
import type { FrameOutput } from '../../../src/video/task-contract.js';
import { CameraPublisher } from '../../../src/video/mqtt/camera-publisher.js';
import { engineFor, type Path } from '../analytics/helpers.js';
import { mosquittoMissing, subscribe, type Received } from '../../helpers/mosquitto.js';
import { announceOnline, publisherOnBroker } from '../../helpers/mqtt-publishing.js';
import { crossingRules, doorLine, hallZone } from '../../helpers/crossing-provider.js';
import { analyticsFrameOutput } from '../../helpers/analytics-frame-output.js';

const skip = mosquittoMissing();

/**
 * Home Assistant's MQTT sensor platform: its documented configuration variables (integrations/sensor.mqtt),
 * and discovery's `origin` (integrations/mqtt, "Discovery messages"). A key outside these is ignored by Home
 * Assistant at best.
 */
const HA_SENSOR_KEYS = new Set([
  'availability',
  'availability_mode',
  'availability_template',
  'availability_topic',
  'default_entity_id',
  'device',
  'device_class',
  'enabled_by_default',
  'encoding',
  'entity_category',
  'entity_picture',
  'expire_after',
  'force_update',
  'icon',
  'json_attributes_template',
  'json_attributes_topic',
  'last_reset_value_template',
  'name',
  'object_id',
  'options',
  'payload_available',
  'payload_not_available',
  'platform',
  'qos',
  'state_class',
  'state_topic',
  'suggested_display_precision',
  'unique_id',
  'unit_of_measurement',
  'value_template',
  'origin',
]);
const HA_AVAILABILITY_KEYS = new Set(['payload_available', 'payload_not_available', 'topic', 'value_template']);
const HA_DEVICE_KEYS = new Set([
  'configuration_url',
  'connections',
  'hw_version',
  'identifiers',
  'manufacturer',
  'model',
  'model_id',
  'name',
  'serial_number',
  'suggested_area',
  'sw_version',
  'via_device',
]);
const HA_ORIGIN_KEYS = new Set(['name', 'sw_version', 'support_url']);
const HA_STATE_CLASSES = new Set(['measurement', 'measurement_angle', 'total', 'total_increasing']);

function checkSensorConfig(topic: string, c: Record<string, any>): void {
  assert.match(topic, /^homeassistant\/sensor\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\/config$/, topic);
  for (const k of Object.keys(c))
    assert.ok(HA_SENSOR_KEYS.has(k), `${topic}: ${k} is not a documented MQTT sensor key`);
  assert.equal(typeof c.state_topic, 'string');
  assert.ok(!/[+#]/.test(c.state_topic));
  assert.equal(typeof c.unique_id, 'string');
  if (c.state_class !== undefined) assert.ok(HA_STATE_CLASSES.has(c.state_class), c.state_class);
  assert.ok(Array.isArray(c.availability) && c.availability.length > 0);
  for (const a of c.availability)
    for (const k of Object.keys(a)) assert.ok(HA_AVAILABILITY_KEYS.has(k), `availability.${k}`);
  assert.ok(['all', 'any', 'latest'].includes(c.availability_mode));
  for (const k of Object.keys(c.device)) assert.ok(HA_DEVICE_KEYS.has(k), `device.${k}`);
  assert.ok(Array.isArray(c.device.identifiers) && c.device.identifiers.length > 0);
  for (const k of Object.keys(c.origin)) assert.ok(HA_ORIGIN_KEYS.has(k), `origin.${k}`);
  assert.ok([0, 1, 2].includes(c.qos));
}

/** `ins` tracks crossing the vertical line x = 320 from right to left (in), then `outs` left to right (out). */
function crossings(ins: number, outs: number): Path[] {
  const walk = (from: number, to: number): Array<[number, number]> =>
    Array.from({ length: 12 }, (_, i) => [from + ((to - from) * i) / 11, 300]);
  const paths: Path[] = [];
  let start = 0;
  for (let k = 0; k < ins + outs; k++) {
    const p: Path = Array(start).fill(null);
    p.push(...(k < ins ? walk(420, 220) : walk(220, 420)));
    paths.push(p);
    start += 14;
  }
  return paths;
}

/** Runs frames through the engine and the publisher as the worker does (chunk offsets made up, increasing). */
function feed(
  engine: AnalyticsEngine,
  cam: CameraPublisher,
  frames: AnalyticsFrame[],
  classOf: (id: number) => string,
): { events: any[]; offsets: Map<string, number> } {
  const events: any[] = [];
  const offsets = new Map<string, number>();
  for (const f of frames) {
    const tracks = f.tracks.map((t) => ({ ...t, class: classOf(t.track_id) }));
    const { events: evs } = engine.process({ ...f, tracks });
    const out = analyticsFrameOutput(
      { ...f, tracks },
      { events: evs, totals: engine.counts() },
      { stream_time_ms: f.t_ms, received_at_ms: Date.now() },
    );
    const offset = 1000 + f.frame_index * 700;
    cam.frame(out, { offset });
    for (const e of evs) {
      events.push(e);
      offsets.set(e.id, offset);
    }
  }
  const closing = engine.finish();
  cam.finish({ analytics: { events: closing, totals: engine.summary() } }, { offset: 1000 + frames.length * 700 });
  events.push(...closing);
  return { events, offsets };
}

/** An event without what the publisher adds to the engine's (and the totals, which it may compute anew). */
const engineFields = (e: any) => ({
  ...e,
  camera: undefined,
  task_id: undefined,
  stream_offset: undefined,
  received_at_ms: undefined,
  totals: undefined,
  rule_totals: undefined,
});

const latest = (msgs: Received[], topic: string) => msgs.filter((m) => m.topic === topic).at(-1)?.payload;

test("12 in and 9 out: the events one for one with their counts; retained totals equal the engine's; a late subscriber reads them", {
  skip,
}, async () => {
  const { broker, s, pub, close } = await publisherOnBroker({ queueMessages: 10_000 });
  try {
    const rules = crossingRules(['person', 'dog']);
    const engine = engineFor(rules);
    const sub = await subscribe(broker.url, [`${s.topicPrefix}/#`]);
    const cam = new CameraPublisher(pub, {
      taskId: 'vt_test',
      camera: 'front',
      version: '0.0.0',
      rules: () => ({ params: parseAnalytics(rules, 'parameters'), version: engine.version }),
    });
    const paths = crossings(12, 9);
    const n = Math.max(...paths.map((p) => p.length));
    const frames: AnalyticsFrame[] = Array.from({ length: n }, (_, f) => ({
      t_ms: f * 100,
      frame_index: f,
      width: 640,
      height: 480,
      tracks: paths.flatMap((p, id) =>
        p[f]
          ? [
              {
                track_id: id + 1,
                class: 'person',
                box: [p[f]![0] - 10, p[f]![1] - 40, p[f]![0] + 10, p[f]![1]] as const,
              },
            ]
          : [],
      ),
    }));
    const { events, offsets } = feed(engine, cam, frames, (id) => (id % 3 === 0 ? 'dog' : 'person'));
    cam.close();
    const counts = engine.counts();
    assert.deepEqual(counts.lines.door, { in: 12, out: 9 });
    const t = pub.topics.camera('front');
    await sub.until(
      (m) =>
        m.filter((x) => x.topic === pub.topics.events).length >= events.length && latest(m, t.available) === 'offline',
      10_000,
      'every event',
    );
    const global = sub.on(pub.topics.events).map((x) => JSON.parse(x.payload));
    const perCamera = sub.on(t.events).map((x) => JSON.parse(x.payload));
    assert.deepEqual(
      global.map((e) => e.id),
      events.map((e) => e.id),
      'the same events, in order',
    );
    assert.deepEqual(perCamera, global);
    let ins = 0,
      outs = 0;
    for (const [i, m] of global.entries()) {
      const e = events[i];
      assert.deepEqual(engineFields(m), engineFields(e));
      assert.equal(m.camera, 'front');
      assert.equal(m.task_id, 'vt_test');
      assert.equal(m.stream_offset, offsets.get(e.id) ?? 1000 + frames.length * 700);
      if (m.type === 'line.crossed') {
        if (m.direction === 'in') ins++;
        else outs++;
        assert.deepEqual(m.totals.lines.door, { in: ins, out: outs }, 'the counts right after this event');
        assert.deepEqual(m.rule_totals, { in: ins, out: outs });
      }
    }
    assert.equal(ins, 12);
    assert.equal(outs, 9);
    // Retained totals equal the engine's; a subscriber that connects late reads them.
    const late = await subscribe(broker.url, [`${s.topicPrefix}/front/#`]);
    await late.until((m) => m.some((x) => x.topic === t.line('door')), 5000, 'retained line totals');
    assert.deepEqual(JSON.parse(latest(late.messages, t.line('door'))!), { in: 12, out: 9, version: 1 });
    assert.equal(latest(late.messages, t.zone('hall', 'all')), String(engine.counts().zones.hall!.occupancy));
    assert.equal(latest(late.messages, t.zone('hall', 'person')), '0');
    assert.equal(latest(late.messages, t.zone('hall', 'dog')), '0');
    assert.equal(latest(late.messages, t.available), 'offline');
    assert.ok(
      late.messages.every((x) => x.retain),
      "only retained state on the camera's topics for a late subscriber",
    );
    // Zone occupancy per class went up while tracks were inside: the live subscriber saw it.
    assert.ok(sub.on(t.zone('hall', 'person')).some((x) => Number(x.payload) > 0));
    assert.ok(sub.on(t.zone('hall', 'dog')).some((x) => Number(x.payload) > 0));
    assert.ok(sub.on(t.objects('all')).some((x) => Number(x.payload) > 0));
    await Promise.all([sub.close(), late.close()]);
  } finally {
    await close();
  }
});

test("discovery: documented keys only; a rule change clears the removed rule's configs; `online` restores them within 2 s", {
  skip,
}, async () => {
  const { broker, s, pub, close } = await publisherOnBroker({ queueMessages: 10_000 });
  try {
    let rules = parseAnalytics(
      {
        lines: [
          doorLine(),
          {
            id: 'gate',
            points: [
              [100, 0],
              [100, 480],
            ],
          },
        ],
        zones: [hallZone(['person'])],
      },
      'parameters',
    );
    const engine = engineFor(rules);
    const cam = new CameraPublisher(pub, {
      taskId: 'vt_d',
      camera: 'yard',
      version: '1.2.3',
      rules: () => ({ params: rules, version: engine.version }),
    });
    const ha = await subscribe(broker.url, ['homeassistant/#']);
    const node = `${s.topicPrefix}_yard`;
    const want = [
      'objects_all',
      'line_door_in',
      'line_door_out',
      'line_gate_in',
      'line_gate_out',
      'zone_hall_all',
      'zone_hall_person',
    ].map((o) => `homeassistant/sensor/${node}/${o}/config`);
    await ha.until((m) => want.every((t) => m.some((x) => x.topic === t)), 5000, 'discovery configs');
    for (const t of want) {
      const c = JSON.parse(latest(ha.messages, t)!);
      checkSensorConfig(t, c);
      assert.deepEqual(
        c.availability.map((a: any) => a.topic),
        [pub.topics.available, pub.topics.camera('yard').available],
      );
      assert.deepEqual(c.device.identifiers, [node]);
      if (t.includes('/line_')) {
        assert.equal(c.state_class, 'total_increasing');
        assert.equal(c.state_topic, pub.topics.camera('yard').line(t.includes('door') ? 'door' : 'gate'));
        assert.match(c.value_template, /^\{\{ value_json\.(in|out) \}\}$/);
      } else {
        assert.equal(c.state_class, 'measurement');
      }
    }
    assert.equal(
      new Set(want.map((t) => JSON.parse(latest(ha.messages, t)!).unique_id)).size,
      want.length,
      'unique ids',
    );
    // A class first seen in the frame gets its own object sensor.
    const frame = (i: number, cls: string): FrameOutput => {
      const f: AnalyticsFrame = {
        t_ms: i * 100,
        frame_index: i,
        width: 640,
        height: 480,
        tracks: [{ track_id: 1, class: cls, box: [500, 100, 520, 140] }],
      };
      const { events } = engine.process(f);
      return analyticsFrameOutput(f, { events, totals: engine.counts() });
    };
    cam.frame(frame(0, 'traffic light'), { offset: 10 });
    const light = `homeassistant/sensor/${node}/objects_traffic_light/config`;
    await ha.until((m) => m.some((x) => x.topic === light), 5000, "a new class's sensor");
    checkSensorConfig(light, JSON.parse(latest(ha.messages, light)!));
    assert.equal(JSON.parse(latest(ha.messages, light)!).state_topic, `${s.topicPrefix}/yard/objects/traffic_light`);
    // The rules change (a PUT): gate goes, the configs follow at the next frame of the new version.
    rules = parseAnalytics(crossingRules(['person']), 'parameters');
    engine.setRules(rules);
    cam.frame(frame(1, 'traffic light'), { offset: 20 });
    for (const gone of ['line_gate_in', 'line_gate_out']) {
      const topic = `homeassistant/sensor/${node}/${gone}/config`;
      await ha.until((m) => latest(m, topic) === '', 5000, `${gone} cleared`);
    }
    // Home Assistant restarts: every config of the current rules is back within 2 s.
    const kept = [...want.filter((t) => !t.includes('gate')), light];
    await announceOnline(ha, (m) => kept.every((t) => (latest(m, t) ?? '').length > 0), 'configs after online');
    assert.ok(
      !ha.messages.some((x) => x.topic.includes('gate') && x.payload.length > 0),
      'a removed rule stays removed',
    );
    cam.close();
    await ha.close();
  } finally {
    await close();
  }
});
