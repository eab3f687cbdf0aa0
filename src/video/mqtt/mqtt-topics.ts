// The MQTT topics sightflow publishes under its prefix (docs/mqtt.md, "Topics"). One function per topic, so
// the publisher, the Home Assistant configs and the documentation's table name the same strings. A camera
// name is checked by the request schema (CAMERA_NAME); rule ids are topic-safe by their own schema; class
// names come from a detector's labels and may hold spaces, so they are folded to one safe level.

/** A camera as a task names it: one topic level that is also a Home Assistant id. */
export const CAMERA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A class name as one topic level: anything but letters, digits, `_`, `.`, `:` and `-` becomes `_`. */
export function classLevel(name: string): string {
  return name.replace(/[^A-Za-z0-9_.:-]/g, '_') || '_';
}

/** Every class together, in the per-class topics (no detector label folds to it: labels are never empty
 * and a real `all` label would share it, which is what a reader of `all` means anyway). */
export const ALL = 'all';

export interface Topics {
  /** Retained `online`/`offline` of this process (its last will says `offline`). */
  available: string;
  /** Every camera's analytics events, QoS 1, not retained. */
  events: string;
  camera(camera: string): CameraTopics;
}

export interface CameraTopics {
  /** Retained `online` while a task publishes for the camera, `offline` after. */
  available: string;
  events: string;
  /** Retained count of objects of a class in the latest frame (`all`: every class). */
  objects(cls: string): string;
  /** Retained count of tracks of a class inside a zone now (`all`: every class). */
  zone(zone: string, cls: string): string;
  /** Retained `{in, out, version}` of a line. */
  line(line: string): string;
}

export function topics(prefix: string): Topics {
  return {
    available: `${prefix}/available`,
    events: `${prefix}/events`,
    camera: (camera) => ({
      available: `${prefix}/${camera}/available`,
      events: `${prefix}/${camera}/events`,
      objects: (cls) => `${prefix}/${camera}/objects/${classLevel(cls)}`,
      zone: (zone, cls) => `${prefix}/${camera}/zones/${zone}/${classLevel(cls)}`,
      line: (line) => `${prefix}/${camera}/lines/${line}`,
    }),
  };
}
