// What may go where an image or a video goes: an http(s) URL or a data URI (sent as they are), a file path
// (Node only), bytes (Uint8Array, Buffer, ArrayBuffer), a Blob or File, or a stream (a web ReadableStream or
// a Node Readable). Bytes travel as a multipart upload (the image as a file part, the other fields as text
// parts, JSON where they are not strings: docs/api.md), so there is no base64 inflation; a stream is read
// into memory first, because a retry must be able to send the body again.

export type Uploadable =
  | string
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>;

export function isUrl(s: string): boolean {
  return /^https?:\/\//i.test(s);
}

export function isDataUri(s: string): boolean {
  return /^data:/i.test(s);
}

async function readAll(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let n = 0;
  const it: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in stream
      ? (stream as AsyncIterable<Uint8Array>)
      : {
          async *[Symbol.asyncIterator]() {
            const r = (stream as ReadableStream<Uint8Array>).getReader();
            for (;;) {
              const x = await r.read();
              if (x.done) return;
              yield x.value;
            }
          },
        };
  for await (const p of it) {
    const b = typeof p === 'string' ? new TextEncoder().encode(p) : p;
    parts.push(b);
    n += b.length;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The bytes of anything but a URL or data URI, as a Blob (a path is read from disk). */
export async function toBlob(x: Exclude<Uploadable, string> | string): Promise<Blob> {
  if (typeof x === 'string') {
    // A specifier in a variable: bundlers for browsers leave it alone (a path is a Node-only input).
    const fsModule = 'node:fs/promises';
    const { readFile } = (await import(fsModule)) as typeof import('node:fs/promises');
    return new Blob([(await readFile(x)) as Uint8Array<ArrayBuffer>]);
  }
  if (x instanceof Blob) return x;
  if (x instanceof ArrayBuffer) return new Blob([x]);
  if (x instanceof Uint8Array) return new Blob([x as Uint8Array<ArrayBuffer>]);
  return new Blob([(await readAll(x)) as Uint8Array<ArrayBuffer>]);
}

export function fileName(x: Uploadable): string {
  if (typeof x === 'string') return x.split(/[\\/]/).pop() || 'upload';
  const name = (x as { name?: unknown }).name;
  return typeof name === 'string' && name ? name.split(/[\\/]/).pop()! : 'upload';
}

/**
 * The request body of an image route: JSON when the image is a URL or data URI, else multipart with the
 * image as its file part.
 */
export async function imageRequest(
  image: Uploadable,
  fields: Record<string, unknown>,
): Promise<{ json: Record<string, unknown> } | { body: FormData }> {
  if (typeof image === 'string' && isUrl(image)) return { json: { ...fields, image } };
  if (typeof image === 'string' && isDataUri(image)) return { json: { ...fields, image_base64: image } };
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    form.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  form.append('image', await toBlob(image), fileName(image));
  return { body: form };
}

export function base64Of(bytes: Uint8Array): string {
  const B = (globalThis as { Buffer?: { from(b: Uint8Array): { toString(enc: string): string } } }).Buffer;
  if (B) return B.from(bytes).toString('base64');
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** A video input element: a URL as `video_url`, anything else as `video_base64`. */
export async function videoInput(
  video: Uploadable,
): Promise<{ type: 'video_url'; url: string } | { type: 'video_base64'; data: string }> {
  if (typeof video === 'string' && (isUrl(video) || /^(rtsps?|rtmp):\/\//i.test(video)))
    return { type: 'video_url', url: video };
  if (typeof video === 'string' && isDataUri(video)) return { type: 'video_base64', data: video };
  const blob = await toBlob(video);
  return { type: 'video_base64', data: base64Of(new Uint8Array(await blob.arrayBuffer())) };
}
