// The task request's `publish` field (docs/mqtt.md, "A task that publishes"): where a task's analytics go
// besides its stream. Only MQTT so far; the object leaves room for other sinks.
import { z } from 'zod';
import type { MqttSettings } from '../../config/index.js';
import { errors } from '../../base/errors.js';
import { expected } from '../pipeline/step-schema.js';
import { CAMERA_NAME } from './mqtt-topics.js';

export const PublishMqtt = z.strictObject(
  {
    camera: z
      .string(expected('a camera name of 1-64 letters, digits, "_" or "-"', 'publish.mqtt.camera'))
      .regex(CAMERA_NAME, expected('a camera name of 1-64 letters, digits, "_" or "-"', 'publish.mqtt.camera'))
      .meta({
        description: "The camera's name: one topic level (`<prefix>/<camera>/...`) and its Home Assistant device",
      }),
  },
  expected('an object {camera}', 'publish.mqtt'),
);

export const Publish = z
  .strictObject(
    {
      mqtt: PublishMqtt.optional().meta({
        description:
          "Publish the task's analytics events, counts and totals to the MQTT broker of SIGHTFLOW_MQTT_URL, with Home Assistant discovery (docs/mqtt.md). 400 invalid_parameter when the server has no broker configured",
      }),
    },
    expected('an object {mqtt}', 'publish'),
  )
  .meta({ description: "Where the task's analytics are published besides its stream" });
export type Publish = z.infer<typeof Publish>;

/** A task may ask for MQTT only where a broker is configured (the workers share the API nodes' settings). */
export function checkPublish(publish: Publish | undefined, mqtt: MqttSettings | null): void {
  if (publish?.mqtt && !mqtt) {
    throw errors.invalidParam(
      'publish.mqtt',
      'Expected no publish.mqtt: this server has no MQTT broker configured (SIGHTFLOW_MQTT_URL)',
    );
  }
}
