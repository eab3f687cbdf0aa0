// The feature step: sets an appearance vector on each target its `when` selects (colour-layout.ts), shown as
// `feature_digest` on the chunk's target and folded into the track's mean vector (track-summary.ts).
import { z } from 'zod';
import { errors } from '../../../base/errors.js';
import { expected, When } from '../step-schema.js';
import { defineStep } from '../step.js';
import { selects } from '../frame-step.js';
import { DESCRIPTOR_MODEL, describeRegions, featureDigest } from './colour-layout.js';

/**
 * Feature models this build can run. Until the embedding models of the vectors module land, the default
 * (parameters.model omitted) is the documented colour-layout descriptor; asking for a model by name that is
 * not here is a 400, rather than silently getting something else.
 */
export const FEATURE_MODELS: readonly string[] = [DESCRIPTOR_MODEL];

export const featureStep = defineStep({
  name: 'feature',
  schema: z.strictObject({
    model: z.literal('feature'),
    parameters: z
      .strictObject({
        model: z
          .string(expected('an embedding model id string', 'parameters.model'))
          .max(200)
          .optional()
          .meta({ description: 'Embedding model id; default multimodal-embedding-v1' }),
      })
      .optional(),
    when: When.optional(),
  }),
  parameters: ['model'],
  plan({ index, params, when }) {
    const model = params.model ?? DESCRIPTOR_MODEL;
    if (typeof model !== 'string' || !FEATURE_MODELS.includes(model)) {
      throw errors.unknownFeatureModel(`steps[${index}].parameters.model`, model, FEATURE_MODELS);
    }
    const filter = when();
    return {
      kind: 'feature',
      index,
      produces: false,
      open() {
        return async (frame, targets) => {
          const chosen = targets.filter((t) => selects(filter, t) && t.box[2] > t.box[0] && t.box[3] > t.box[1]);
          const vectors = describeRegions(
            frame.image,
            chosen.map((t) => t.box),
          );
          chosen.forEach((t, i) => {
            t.feature = vectors[i];
          });
        };
      },
    };
  },
  addToTarget(t, out) {
    if (t.feature) out.feature_digest = featureDigest(t.feature);
  },
});
