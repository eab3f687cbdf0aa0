// Starts bench/mqtt-subscriber.ts as a child process and, when stopped, hands back every message it received
// with the time it arrived there (Date.now() in the child: the same wall clock as the bench's own stamps).
// The child speaks only twice, `ready` and the final dump, so a round's timings carry none of its work.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface TimedMessage {
  topic: string;
  payload: string;
  /** Date.now() in the subscriber's process when the message arrived. */
  at: number;
}

export interface SubscriberProcess {
  pid: number | undefined;
  /** Closes the child's stdin and waits for its messages. */
  stop(): Promise<TimedMessage[]>;
}

// In the suite's compiled tree this file is .js and so is its sibling.
const SCRIPT = fileURLToPath(
  new URL(`./mqtt-subscriber${import.meta.url.endsWith('.js') ? '.js' : '.ts'}`, import.meta.url),
);

export async function subscriberProcess(url: string, filters: string[]): Promise<SubscriberProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, url, ...filters], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err = (err + s).slice(-4000)));
  // 'close', not 'exit': the dump may still be in the pipe when the child exits.
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const deadline = Date.now() + 20_000;
  while (!out.startsWith('ready\n')) {
    if (child.exitCode !== null) throw new Error(`MQTT subscriber exited ${child.exitCode}: ${err}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`MQTT subscriber not ready: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    pid: child.pid,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      if (code !== 0) throw new Error(`MQTT subscriber exited ${code}: ${err}`);
      return out
        .slice('ready\n'.length)
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as TimedMessage);
    },
  };
}
