// Blobs as plain files under <data-dir>/blobs, a directory every node can mount. Writes go to a temp file that
// is renamed into place, so a reader on any node sees either the old blob or the whole new one, never half.
// The content type lives in a sidecar "<key>.meta.json"; the data file's rename is the commit point.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errors } from '../base/errors.js';

export interface BlobInfo {
  key: string;
  size: number;
  contentType: string;
  modifiedAt: Date;
  /** Absolute path of the data file, for callers that stream it themselves. */
  path: string;
}

export type BlobBody = Uint8Array | Readable | AsyncIterable<Uint8Array>;

const META_SUFFIX = '.meta.json';
const MAX_KEY_LENGTH = 512;
// Segments of safe characters; none may start with "." (that rules out "..", "." and our temp files).
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;
const PREFIX = /^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*)?$/;

/** True for keys the store accepts: "col_1/item_2.jpg", never "../x", "/abs", "a//b" or "x.meta.json". */
export function isValidBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && KEY.test(key) && !key.endsWith(META_SUFFIX);
}

function assertKey(key: string): void {
  if (!isValidBlobKey(key))
    throw new TypeError(`invalid blob key ${JSON.stringify(key)}: use [A-Za-z0-9/_.-], no leading dots in a segment`);
}

const isMissing = (e: unknown) =>
  (e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR';

export class BlobStore {
  constructor(readonly root: string) {}

  /** The store of a data directory: <dataDir>/blobs. */
  static forDataDir(dataDir: string): BlobStore {
    return new BlobStore(join(dataDir, 'blobs'));
  }

  pathOf(key: string): string {
    assertKey(key);
    return join(this.root, key);
  }

  /** Writes the blob atomically (replacing any previous one); with maxBytes a longer stream fails with 413. */
  async put(key: string, body: BlobBody, contentType: string, opts: { maxBytes?: number } = {}): Promise<BlobInfo> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = (p: string) => join(dirname(p), `.${randomBytes(8).toString('hex')}.tmp`);
    const dataTmp = tmp(path);
    const metaTmp = tmp(path);
    try {
      const source = body instanceof Uint8Array ? Readable.from([body]) : body;
      const out = createWriteStream(dataTmp, { flags: 'wx' });
      if (opts.maxBytes !== undefined) await pipeline(source, capBytes(opts.maxBytes), out);
      else await pipeline(source, out);
      await fsyncFile(dataTmp);
      await writeFile(metaTmp, JSON.stringify({ contentType }), { flag: 'wx' });
      // Meta first: for a fresh key nothing is visible until the data rename below.
      await rename(metaTmp, path + META_SUFFIX);
      await rename(dataTmp, path);
    } catch (e) {
      await Promise.all([rm(dataTmp, { force: true }), rm(metaTmp, { force: true })]);
      throw e;
    }
    const info = await this.stat(key);
    if (!info) throw new Error(`blob ${key} vanished right after it was written`);
    return info;
  }

  /** Size, content type and path, or null when there is no such blob. */
  async stat(key: string): Promise<BlobInfo | null> {
    const path = this.pathOf(key);
    let st;
    try {
      st = await stat(path);
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
    if (!st.isFile()) return null;
    return { key, size: st.size, contentType: await this.readContentType(path), modifiedAt: st.mtime, path };
  }

  /** The whole blob, or bytes start..end inclusive. Throws notFound('file') when it does not exist. */
  async read(key: string, range?: { start: number; end: number }): Promise<Buffer> {
    const path = this.pathOf(key);
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      if (isMissing(e)) throw errors.notFound('file');
      throw e;
    }
    try {
      if (!range) return await fh.readFile();
      const length = Math.max(0, range.end - range.start + 1);
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, range.start);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  }

  /** A stream of the blob (or of start..end inclusive). */
  createReadStream(key: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
  }

  /** Removes the blob and its sidecar; false when there was none. */
  async delete(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    let existed = true;
    try {
      await unlink(path);
    } catch (e) {
      if (!isMissing(e)) throw e;
      existed = false;
    }
    await rm(path + META_SUFFIX, { force: true });
    await this.pruneEmptyDirs(dirname(path));
    return existed;
  }

  /**
   * Removes every blob whose key starts with `prefix` ("col_1/" for a collection's files); returns how many.
   * An empty prefix is refused: wiping the store takes a deliberate rm, not a missing argument.
   */
  async deletePrefix(prefix: string): Promise<number> {
    if (prefix.length === 0 || prefix.length > MAX_KEY_LENGTH || !PREFIX.test(prefix))
      throw new TypeError(`invalid blob key prefix ${JSON.stringify(prefix)}`);
    const cut = prefix.lastIndexOf('/') + 1;
    const dir = join(this.root, prefix.slice(0, cut));
    const namePrefix = prefix.slice(cut);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (isMissing(e)) return 0;
      throw e;
    }
    let count = 0;
    for (const entry of entries) {
      if (entry.name.startsWith('.') || !entry.name.startsWith(namePrefix)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        count += await countBlobs(path);
        await rm(path, { recursive: true, force: true });
      } else {
        await rm(path, { force: true });
        if (!entry.name.endsWith(META_SUFFIX)) count++;
      }
    }
    await this.pruneEmptyDirs(dir);
    return count;
  }

  private async readContentType(path: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(path + META_SUFFIX, 'utf8')) as { contentType?: unknown };
      if (typeof meta.contentType === 'string' && meta.contentType) return meta.contentType;
    } catch (e) {
      if (!isMissing(e) && !(e instanceof SyntaxError)) throw e;
    }
    return 'application/octet-stream';
  }

  /** Empty key directories are removed so deleted collections leave nothing behind; losing a race is fine. */
  private async pruneEmptyDirs(dir: string): Promise<void> {
    for (let d = dir; d.startsWith(this.root + sep) && d !== this.root; d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return;
      }
    }
  }
}

async function countBlobs(dir: string): Promise<number> {
  let n = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && !entry.name.startsWith('.') && !entry.name.endsWith(META_SUFFIX)) n++;
  }
  return n;
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function capBytes(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > maxBytes) return done(errors.payloadTooLarge('file', maxBytes));
      done(null, chunk);
    },
  });
}
