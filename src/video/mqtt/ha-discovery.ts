// Home Assistant MQTT discovery configs (docs/mqtt.md, "Home Assistant"): each camera is one device; its
// zones' occupancy (per class and all), its lines' in and out counters (`total_increasing`, so long-term
// statistics sum them across task restarts) and its object counts are sensors. Every entity is available
// only while both this process and the camera's task say `online`, so a stopped task or a dead process
// shows as unavailable rather than as a stale number. Only keys of Home Assistant's MQTT sensor platform
// are used (the test holds them to its documented list).
import { ALL, topics } from './mqtt-topics.js';

export interface DiscoveryScope {
  /** sightflow's topic prefix. */
  prefix: string;
  /** Home Assistant's discovery prefix. */
  haPrefix: string;
  camera: string;
  /** sightflow's version, for the device and origin. */
  version: string;
}

/** One entity's discovery message: a retained config on `topic` (an empty retained payload removes it). */
export interface DiscoveryConfig {
  topic: string;
  config: Record<string, unknown>;
}

/** An id part Home Assistant accepts in a discovery topic and as an entity id: letters, digits, `_`, `-`. */
export function haId(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The camera's device id (one per prefix and camera, so two installations on one broker stay apart). */
export function deviceId(scope: DiscoveryScope): string {
  return `${haId(scope.prefix)}_${haId(scope.camera)}`;
}

function entity(scope: DiscoveryScope, objectId: string, fields: Record<string, unknown>): DiscoveryConfig {
  const node = deviceId(scope);
  const t = topics(scope.prefix);
  return {
    topic: `${scope.haPrefix}/sensor/${node}/${objectId}/config`,
    config: {
      unique_id: `${node}_${objectId}`,
      ...fields,
      availability: [{ topic: t.available }, { topic: t.camera(scope.camera).available }],
      availability_mode: 'all',
      device: {
        identifiers: [node],
        name: `${scope.camera} (sightflow)`,
        manufacturer: 'sightflow',
        model: 'Video analytics camera',
        sw_version: scope.version,
      },
      origin: { name: 'sightflow', sw_version: scope.version },
      qos: 1,
    },
  };
}

/** A line's two counters. Their state topic carries `{in, out, version}`. */
export function lineConfigs(scope: DiscoveryScope, line: string): DiscoveryConfig[] {
  const state = topics(scope.prefix).camera(scope.camera).line(line);
  return (['in', 'out'] as const).map((dir) =>
    entity(scope, `line_${haId(line)}_${dir}`, {
      name: `Line ${line} ${dir}`,
      state_topic: state,
      value_template: `{{ value_json.${dir} }}`,
      state_class: 'total_increasing',
      icon: dir === 'in' ? 'mdi:arrow-right-bold' : 'mdi:arrow-left-bold',
    }),
  );
}

/** A zone's occupancy of one class (`all`: every class). */
export function zoneConfig(scope: DiscoveryScope, zone: string, cls: string = ALL): DiscoveryConfig {
  return entity(scope, `zone_${haId(zone)}_${haId(cls)}`, {
    name: cls === ALL ? `Zone ${zone} occupancy` : `Zone ${zone} ${cls}`,
    state_topic: topics(scope.prefix).camera(scope.camera).zone(zone, cls),
    state_class: 'measurement',
    icon: 'mdi:vector-polygon',
  });
}

/** Objects of one class in the camera's latest frame (`all`: every class). */
export function objectConfig(scope: DiscoveryScope, cls: string = ALL): DiscoveryConfig {
  return entity(scope, `objects_${haId(cls)}`, {
    name: cls === ALL ? 'Objects' : `${cls[0]!.toUpperCase()}${cls.slice(1)} count`,
    state_topic: topics(scope.prefix).camera(scope.camera).objects(cls),
    state_class: 'measurement',
    icon: 'mdi:eye',
  });
}
