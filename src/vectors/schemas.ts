// Request and response shapes of /v1/vectors/* (docs/vectors.md). Bodies are
// strict; messages follow the one template "Expected X for field but received Y". "Exactly one content
// field" is checked by the routes (it needs the item's index for `param`).
import { z } from 'zod';
import { MomentOut } from './moment-search.js';

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
          ? input.length > 0
            ? `an array of ${input.length}`
            : 'an empty array'
          : typeof input === 'object'
            ? 'an object'
            : String(input);

const expected = (what: string, field: string) => ({
  error: (iss: { input?: unknown }) => `Expected ${what} for ${field} but received ${received(iss.input)}`,
});

export const MAX_ITEMS_PER_REQUEST = 100;
export const MAX_TEXT_CHARS = 8000;

export const CreateCollectionBody = z.strictObject({
  name: z
    .string(expected('a string of 1 to 100 characters', 'name'))
    .trim()
    .min(1, expected('a string of 1 to 100 characters', 'name'))
    .max(100, expected('a string of 1 to 100 characters', 'name'))
    .meta({ description: 'Unique within the project; 1-100 characters' }),
  description: z
    .string(expected('a string of at most 500 characters', 'description'))
    .max(500, expected('a string of at most 500 characters', 'description'))
    .nullish(),
  model_id: z
    .string(expected('an embedding model id string', 'model_id'))
    .optional()
    .meta({ description: 'Embedding model id (GET /v1/vectors/models); default multimodal-embedding-v1' }),
});
export type CreateCollectionBody = z.infer<typeof CreateCollectionBody>;

const contentFields = {
  image: z
    .string(expected('an http(s) URL string', 'image'))
    .nullish()
    .meta({ description: 'HTTP(S) URL of a JPEG, PNG or WEBP image' }),
  image_base64: z
    .string(expected('a base64 string or data URI', 'image_base64'))
    .nullish()
    .meta({ description: 'Base64 data URI or bare base64 of a JPEG, PNG or WEBP image' }),
  text: z
    .string(expected('a string', 'text'))
    .nullish()
    .meta({ description: `Text, 1-${MAX_TEXT_CHARS} characters` }),
  audio: z
    .string(expected('an http(s) URL, data URI or base64 string', 'audio'))
    .nullish()
    .meta({ description: 'WAV, MP3, FLAC or OGG audio: an http(s) URL, a data URI or bare base64' }),
};

/** Client-given item ids: what fits in a URL path segment and a file name as it is. */
export const ITEM_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const ITEM_ID_RULE = '1-128 characters: letters, digits and . _ : - (starting with a letter or digit)';

export const ItemInput = z.strictObject({
  ...contentFields,
  id: z
    .string(expected(`an item id of ${ITEM_ID_RULE}`, 'id'))
    .regex(ITEM_ID_PATTERN, expected(`an item id of ${ITEM_ID_RULE}`, 'id'))
    .optional()
    .meta({
      description: `Your id for the item (${ITEM_ID_RULE}), unique within the collection. Indexing an id the collection holds replaces that item (vector, content and metadata: an upsert); left out, the server assigns item_...`,
    }),
  metadata: z
    .record(z.string(), z.unknown(), expected('an object', 'metadata'))
    .optional()
    .meta({ description: 'Free key/value object, returned with the item' }),
});
export type ItemInput = z.infer<typeof ItemInput>;

export const IndexBody = z.strictObject({
  items: z
    .array(ItemInput, expected(`an array of 1 to ${MAX_ITEMS_PER_REQUEST} items`, 'items'))
    .min(1, expected(`an array of 1 to ${MAX_ITEMS_PER_REQUEST} items`, 'items'))
    .max(MAX_ITEMS_PER_REQUEST, expected(`an array of 1 to ${MAX_ITEMS_PER_REQUEST} items`, 'items')),
});
export type IndexBody = z.infer<typeof IndexBody>;

export const FILTER_DESCRIPTION = [
  'Only items whose metadata match are searched (the filter applies inside the index search, so top_k results come back whenever that many items match).',
  'A filter is an object of clauses that must all hold; {} matches every item.',
  'A clause is `"<key>": <value>` (the metadata key equals the value: a string, finite number or boolean; strict, so 1 does not equal "1"),',
  '`"<key>": {"$eq": v, "$in": [v, ...] (1-1000 values), "$gt" | "$gte" | "$lt" | "$lte": <number>}` (every operator given holds; range operators match numeric values only),',
  '`"$and": [filter, ...]` or `"$or": [filter, ...]` (1-64 filters, nested at most 4 deep).',
  'Keys are top-level metadata keys (1-256 characters, not starting with $); an item without the key matches no condition on it. At most 64 conditions in all.',
  'Example: {"category": "shoes", "price": {"$gte": 10, "$lt": 50}, "$or": [{"brand": {"$in": ["acme", "zenith"]}}, {"on_sale": true}]}.',
  'A malformed filter is a 400 invalid_parameter whose param is the path of the offending part (e.g. filter.price.$gt).',
].join(' ');

export const SearchBody = z.strictObject({
  ...contentFields,
  filter: z
    .record(z.string(), z.unknown(), expected('an object of filter clauses', 'filter'))
    .optional()
    .meta({
      description: FILTER_DESCRIPTION,
      examples: [
        { category: 'shoes', price: { $gte: 10, $lt: 50 } },
        { $or: [{ brand: { $in: ['acme', 'zenith'] } }, { on_sale: true }] },
      ],
    }),
  top_k: z
    .number(expected('an integer between 1 and 100', 'top_k'))
    .int(expected('an integer between 1 and 100', 'top_k'))
    .min(1, expected('an integer between 1 and 100', 'top_k'))
    .max(100, expected('an integer between 1 and 100', 'top_k'))
    .optional()
    .meta({ description: 'Most results, 1-100, default 10' }),
  threshold: z
    .number(expected('a number between 0 and 1', 'threshold'))
    .min(0, expected('a number between 0 and 1', 'threshold'))
    .max(1, expected('a number between 0 and 1', 'threshold'))
    .optional()
    .meta({ description: 'Minimum cosine similarity, 0-1' }),
  group_by: z.enum(['video'], expected('"video"', 'group_by')).optional().meta({
    description:
      'With "video": answer `videos` instead of `results`: the top_k videos whose moments (items a video index step wrote) match best, each with its moments, adjacent matching segments merged (docs/moments.md)',
  }),
  merge_gap_ms: z
    .number(expected('an integer between 0 and 600000', 'merge_gap_ms'))
    .int(expected('an integer between 0 and 600000', 'merge_gap_ms'))
    .min(0, expected('an integer between 0 and 600000', 'merge_gap_ms'))
    .max(600_000, expected('an integer between 0 and 600000', 'merge_gap_ms'))
    .optional()
    .meta({
      description: 'With group_by "video": segments at most this far apart (ms) merge into one moment; default 1000',
    }),
});
export type SearchBody = z.infer<typeof SearchBody>;

export const DeleteItemsBody = z
  .strictObject({
    ids: z
      .array(z.string(expected('an item id string', 'each id')), expected('an array of 1 to 1000 item ids', 'ids'))
      .min(1, expected('an array of 1 to 1000 item ids', 'ids'))
      .max(1000, expected('an array of 1 to 1000 item ids', 'ids'))
      .optional()
      .meta({ description: 'The items to delete (exactly one of ids, filter)' }),
    filter: z.record(z.string(), z.unknown(), expected('an object of filter clauses', 'filter')).optional().meta({
      description:
        'Delete every item whose metadata match (the search filter grammar), e.g. {"task_id": "vt_..."} for the moments a video task indexed; {} is refused',
    }),
  })
  .superRefine((b, ctx) => {
    if (b.ids === undefined && b.filter === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['ids'],
        message: 'Expected an array of 1 to 1000 item ids for ids but received nothing',
      });
    if (b.ids !== undefined && b.filter !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['filter'],
        message: 'Expected exactly one of ids, filter but received both',
      });
  });
export type DeleteItemsBody = z.infer<typeof DeleteItemsBody>;

export const PatchItemBody = z.strictObject({
  metadata: z.record(z.string(), z.unknown(), expected('an object', 'metadata')).meta({
    description:
      "Merged into the item's metadata as a JSON merge patch (RFC 7386): a key set to null is removed, an object value merges into an object value key by key, any other value replaces the key's value",
  }),
});
export type PatchItemBody = z.infer<typeof PatchItemBody>;

const intParam = (field: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, expected(`an integer between ${min} and ${max}`, field))
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, expected(`an integer between ${min} and ${max}`, field))
        .max(max, expected(`an integer between ${min} and ${max}`, field)),
    );

export const ItemsQuery = z.strictObject({
  limit: intParam('limit', 1, 100).optional(),
  offset: intParam('offset', 0, 1_000_000_000).optional(),
});
export type ItemsQuery = z.infer<typeof ItemsQuery>;

export const ModelOut = z
  .object({ id: z.string(), name: z.string(), types: z.array(z.string()), dimensions: z.number(), metric: z.string() })
  .meta({ id: 'EmbeddingModel' });
export const CollectionOut = z
  .object({
    id: z.string(),
    object: z.literal('vectors.collection'),
    name: z.string(),
    description: z.string().nullable(),
    model_id: z.string(),
    dimensions: z.number(),
    metric: z.string(),
    item_count: z.number(),
    created_at: z.string(),
  })
  .meta({ id: 'Collection' });
export const ItemOut = z
  .object({
    id: z.string(),
    content_type: z.enum(['image', 'text', 'audio']),
    text: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()),
    content_url: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'Item' });
export const SearchResultOut = z
  .object({
    id: z.string(),
    score: z.number(),
    content_type: z.enum(['image', 'text', 'audio']),
    text: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()),
    content_url: z.string().nullable(),
    moment: MomentOut.optional().meta({
      description: "For an item a video index step wrote: where it is in the video and in the task's result stream",
    }),
  })
  .meta({ id: 'SearchResult' });
export const UsageOut = z.object({ input_tokens: z.number() });
