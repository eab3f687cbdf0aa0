// A lock between processes around one file's read-modify-write (a server and `sightflow models settings` on one
// data dir, or two of them): a lock file made beside it with O_EXCL, holding the holder's pid. Each holds it
// for the few milliseconds of a read and a write, so a lock whose process is gone, or older than STALE_MS, was
// left by a process that died holding it and is taken over.
import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** A lock older than this was left behind: no holder keeps it so long. */
const STALE_MS = 30_000;

export class FileLockTimeout extends Error {}

/**
 * Runs `fn` holding `<path>.lock`; waits (with backoff) while another process holds it, at most `timeoutMs`,
 * then throws FileLockTimeout naming the lock and its holder. Within one process, callers order themselves:
 * a second call while the first holds the lock waits for it like any other.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    let made = false;
    try {
      const h = await open(lock, 'wx');
      made = true;
      try {
        await h.writeFile(`${process.pid}\n`);
      } finally {
        await h.close();
      }
      break;
    } catch (e) {
      // A lock made but not written (a full disk) would hold the others off for STALE_MS: gone with the error.
      if (made) await rm(lock, { force: true });
      if (made || (e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = await lockHolder(lock);
    if (holder.stale) {
      // Between reading the holder and removing its file another process may have taken the lock over the
      // same way and made its own: a window of a file system call, after a process died holding the lock.
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw new FileLockTimeout(
        `${lock} is held by process ${holder.pid ?? 'unknown'}; remove the file if no sightflow process is writing there`,
      );
    await sleep(wait + Math.random() * wait);
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}

/** Who holds a lock file, and whether it was left behind (its process gone, or too old). */
async function lockHolder(lock: string): Promise<{ pid?: number; stale: boolean }> {
  let text: string;
  let age: number;
  try {
    [text, age] = await Promise.all([readFile(lock, 'utf8'), stat(lock).then((s) => Date.now() - s.mtimeMs)]);
  } catch {
    return { stale: false }; // gone meanwhile: try again
  }
  const pid = Number.parseInt(text, 10);
  // A holder that has made the file but not yet written its pid reads as empty: not stale unless old.
  if (!(pid > 0)) return { stale: age > STALE_MS };
  return { pid, stale: age > STALE_MS || !alive(pid) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
