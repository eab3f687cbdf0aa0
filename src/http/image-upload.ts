// Binary image uploads for routes whose JSON body takes `image` / `image_base64`: a multipart/form-data body
// (an `image` file part plus the other fields as text parts) or a raw image/jpeg|png|webp body (the other
// fields in the query string). Both become the same body object a JSON request would give, so the route's
// zod schema validates it with the same messages, and the image bytes ride in `image_base64` as a Buffer
// (base64 decoding accepts one as already-decoded bytes): no base64 round trip, the same 20 MB image limit
// and the same errors. Text fields are typed by the body schema: a number, boolean or object field is read
// as JSON, an array field takes a JSON array string or one part (or query parameter) per element. An object
// field (a search's `filter`) whose text is not JSON is a 400 saying so, rather than the schema's "received a
// string", which would hide the syntax error.
import { z, type ZodType } from 'zod';
import { errors } from '../base/errors.js';
import { IMAGE_MAX_BYTES } from '../media/image-input.js';
import { multipartBoundary, parseMultipart } from './multipart.js';

/** Request Content-Types an image route takes besides application/json. */
export const RAW_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const IMAGE_UPLOAD_TYPES = ['multipart/form-data', ...RAW_IMAGE_TYPES] as const;

export function isImageUploadType(mediaType: string): boolean {
  return (IMAGE_UPLOAD_TYPES as readonly string[]).includes(mediaType);
}

type FieldKind = 'string' | 'json' | 'object' | 'array';
const kindsCache = new WeakMap<ZodType, Map<string, FieldKind>>();

/** How each body field's text is read, from the body's JSON Schema (computed once per schema). */
function fieldKinds(schema: ZodType): Map<string, FieldKind> {
  let kinds = kindsCache.get(schema);
  if (kinds) return kinds;
  kinds = new Map();
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchema>;
  };
  for (const [name, prop] of Object.entries(js.properties ?? {})) {
    const types = typesOf(prop);
    kinds.set(
      name,
      types.has('array')
        ? 'array'
        : types.has('string') || types.size === 0
          ? 'string'
          : types.size === 1 && types.has('object')
            ? 'object'
            : 'json',
    );
  }
  kindsCache.set(schema, kinds);
  return kinds;
}

interface JsonSchema {
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

function typesOf(s: JsonSchema): Set<string> {
  const out = new Set<string>();
  for (const t of Array.isArray(s.type) ? s.type : s.type ? [s.type] : []) if (t !== 'null') out.add(t);
  for (const sub of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) for (const t of typesOf(sub)) out.add(t);
  return out;
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  } // the schema then says what was expected
}

function readJsonObject(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.invalidParam(
      name,
      `Expected a JSON object for ${name} but received text that is not JSON (${(e as Error).message.slice(0, 200)})`,
    );
  }
}

/** Text values by field name (in order) -> the body object a JSON client would have sent. */
function typedFields(values: Map<string, string[]>, schema: ZodType): Record<string, unknown> {
  const kinds = fieldKinds(schema);
  const out: Record<string, unknown> = {};
  // Own properties even for names such as __proto__, as JSON.parse makes them: the strict schema then
  // refuses them as unknown fields instead of the name reaching a setter.
  const set = (name: string, value: unknown) =>
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  for (const [name, list] of values) {
    const kind = kinds.get(name) ?? 'string';
    if (kind === 'array') {
      set(name, list.length === 1 && list[0]!.trimStart().startsWith('[') ? readJson(list[0]!) : list);
      continue;
    }
    if (list.length > 1)
      throw errors.invalidBody(`Invalid body field ${name}: given ${list.length} times, expected once`, name);
    set(name, kind === 'json' ? readJson(list[0]!) : kind === 'object' ? readJsonObject(name, list[0]!) : list[0]!);
  }
  return out;
}

const IMAGE_FIELD = 'image';
const BYTES_FIELD = 'image_base64';
/** Stands in for the bytes while the schema validates (it checks image_base64 is a string). */
const PLACEHOLDER = 'binary';

export interface ImageUpload {
  /** The body object to validate with the route's schema. */
  fields: Record<string, unknown>;
  /** The uploaded image, to put in `image_base64` after validation; null when none was uploaded. */
  image: Buffer | null;
}

/**
 * Reads a multipart or raw-image request into body fields. `contentType` is the whole header, `mediaType`
 * its lower-cased type without parameters (one of IMAGE_UPLOAD_TYPES).
 */
export function readImageUpload(
  contentType: string,
  mediaType: string,
  body: Buffer,
  query: URLSearchParams,
  schema: ZodType,
): ImageUpload {
  const values = new Map<string, string[]>();
  const add = (name: string, value: string) => {
    const list = values.get(name);
    if (list) list.push(value);
    else values.set(name, [value]);
  };
  let image: Buffer | null = null;
  if (mediaType === 'multipart/form-data') {
    const parts = parseMultipart(body, multipartBoundary(contentType), {
      maxFileBytes: IMAGE_MAX_BYTES,
      fileWhat: 'image',
    });
    for (const p of parts) {
      // The `image` part is the file unless it is a plain text part, which is then an image URL as in JSON.
      const isFile = p.filename !== null || (p.contentType !== null && p.contentType !== 'text/plain');
      if (isFile) {
        if (p.name !== IMAGE_FIELD)
          throw errors.invalidBody(
            `Invalid multipart/form-data body: only the image part may be a file, but "${p.name.slice(0, 60)}" is one`,
            p.name,
          );
        if (image) throw errors.invalidBody('Invalid multipart/form-data body: more than one image part', IMAGE_FIELD);
        image = p.data;
      } else {
        add(p.name, p.data.toString('utf8'));
      }
    }
  } else {
    if (body.length > IMAGE_MAX_BYTES) throw errors.payloadTooLarge('image', IMAGE_MAX_BYTES);
    image = body;
    for (const [k, v] of query) add(k, v);
  }
  if (image && values.has(BYTES_FIELD)) throw errors.imageInputCount('both');
  const fields = typedFields(values, schema);
  if (image) fields[BYTES_FIELD] = PLACEHOLDER;
  return { fields, image };
}

/** Body fields that a raw-image request takes in the query string (all but the image inputs). */
export function rawImageQueryFields(schema: ZodType): string[] {
  return [...fieldKinds(schema).keys()].filter((k) => k !== IMAGE_FIELD && k !== BYTES_FIELD);
}
