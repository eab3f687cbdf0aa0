// Request and response shapes of /v1/vision/* (docs/vision.md): the server validates with these and the
// OpenAPI document is generated from them. Bodies are strict (an unknown field is a 400, so a typo such as
// "confidence" is not silently ignored). Messages follow one template: "Expected X for field but received Y".
import { z } from 'zod';

const received = (input: unknown): string =>
  input === undefined
    ? 'nothing'
    : input === null
      ? 'null'
      : typeof input === 'string'
        ? input.length > 60
          ? `a string of ${input.length} characters`
          : JSON.stringify(input)
        : Array.isArray(input)
          ? 'an array'
          : typeof input === 'object'
            ? 'an object'
            : String(input);

const expected = (what: string, field: string) => ({
  error: (iss: { input?: unknown }) => `Expected ${what} for ${field} but received ${received(iss.input)}`,
});

// null counts as "not given" (parseImageInput decides between the two), so clients that send both keys
// with one of them null are fine.
const imageFields = {
  image: z
    .string(expected('an http(s) URL string', 'image'))
    .nullish()
    .meta({ description: 'HTTP(S) URL of a JPEG, PNG or WEBP image (exactly one of image, image_base64)' }),
  image_base64: z.string(expected('a base64 string or data URI', 'image_base64')).nullish().meta({
    description: 'Base64 data URI (data:image/png;base64,...) or bare base64 of a JPEG, PNG or WEBP image, up to 20 MB',
  }),
};

const modelField = (task: string, dflt: string) =>
  z
    .string(expected('a model id string', 'model'))
    .max(200, expected('at most 200 characters', 'model'))
    .optional()
    .meta({
      description: `Which ${task} model runs (GET /v1/models lists those with task "${task}"); default ${dflt}`,
    });

export const DescribeBody = z.strictObject({
  ...imageFields,
  model: modelField('describe', 'the configured VLM, else sightflow-describe-v1'),
  prompt: z
    .string(expected('a string', 'prompt'))
    .max(4000, expected('at most 4000 characters', 'prompt'))
    .optional()
    .meta({ description: 'What to focus on or a question, e.g. "how many people?"' }),
  language: z.string(expected('a language code string such as "en" or "zh"', 'language')).optional().meta({
    description:
      'Language of the description: en (default) or zh for the built-in describer; any language a configured VLM speaks',
  }),
  detail: z.enum(['low', 'high'], expected('"low" or "high"', 'detail')).optional().meta({
    description:
      'low: objects and counts from a downscaled image; high: adds text, colours and positions. Default: by image size (low up to 512x512)',
  }),
});

export const OcrBody = z.strictObject({
  ...imageFields,
  model: modelField('ocr', 'pp-ocrv4'),
  language: z
    .string(expected('a language code string such as "auto", "en" or "zh"', 'language'))
    .optional()
    .meta({ description: 'OCR language hint: auto (default), en, zh, or an installed Tesseract language' }),
});

export const DetectBody = z.strictObject({
  ...imageFields,
  model: modelField('detect', 'centernet-coco'),
  classes: z
    .array(z.string(expected('a string', 'each class name')), expected('an array of class names', 'classes'))
    .max(1000, expected('at most 1000 class names', 'classes'))
    .optional()
    .meta({
      description:
        'Only these classes, by the model\'s own names (COCO names such as "person", "car" for the default; GET /v1/models/{id} lists a model\'s labels); default all',
    }),
  confidence_threshold: z
    .number(expected('a number between 0 and 1', 'confidence_threshold'))
    .min(0, expected('a number between 0 and 1', 'confidence_threshold'))
    .max(1, expected('a number between 0 and 1', 'confidence_threshold'))
    .optional()
    .meta({ description: 'Objects below this confidence are left out (default 0.5)' }),
});

export type DescribeBody = z.infer<typeof DescribeBody>;
export type OcrBody = z.infer<typeof OcrBody>;
export type DetectBody = z.infer<typeof DetectBody>;

export const Usage = z.object({
  input_tokens: z
    .number()
    .int()
    .nonnegative()
    .meta({ description: 'Image tokens (docs/api.md, "Usage") plus prompt tokens' }),
  output_tokens: z.number().int().nonnegative().meta({ description: 'Tokens of the returned text (o200k_base)' }),
});

const BBox = z
  .tuple([z.number(), z.number(), z.number(), z.number()])
  .meta({ description: '[x1, y1, x2, y2] in source-image pixels' });

export const DescribeResult = z.object({ description: z.string(), model: z.string(), usage: Usage });

export const OcrResult = z.object({
  text: z.string().meta({ description: 'Full text, lines in reading order separated by newlines' }),
  blocks: z.array(z.object({ text: z.string(), bbox: BBox, confidence: z.number().min(0).max(1) })),
  model: z.string(),
  usage: Usage,
});

export const DetectResult = z.object({
  objects: z.array(
    z.object({
      class: z.string(),
      confidence: z.number(),
      bbox: BBox,
      attributes: z
        .object({ color: z.string().optional() })
        .meta({ description: 'May be empty; color is the dominant named colour' }),
    }),
  ),
  model: z.string(),
  usage: Usage,
});
