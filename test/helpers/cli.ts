// Runs the real `sightflow` CLI (src/main.ts through tsx) as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

// CI (SIGHTFLOW_TEST_DIST=1, after setup built dist/) runs the built CLI exactly as `./quickstart serve` does,
// through its launcher (bin/sightflow.cjs); elsewhere the sources run through tsx.
export const useDist = process.env.SIGHTFLOW_TEST_DIST === '1';
export const MAIN = fileURLToPath(new URL(useDist ? '../../bin/sightflow.cjs' : '../../src/main.ts', import.meta.url));
export const NODE_ARGS = useDist ? [] : ['--import', 'tsx'];

// Every child started here is killed once its test file's tests are done: a test that failed before its own
// kill would otherwise leave a server running, and the file's process waiting on its pipes for ever.
const children = new Set<ChildProcess>();
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** A command that has not exited after `timeoutMs` is killed: code null, and stderr says so. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = track(
      spawn(process.execPath, [...NODE_ARGS, MAIN, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += `\n(sightflow ${args.join(' ')} killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Served {
  child: ChildProcess;
  port: number;
  lines: string[];
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts `sightflow serve` on port 0 and resolves once its JSON log says where it listens. */
export function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [...NODE_ARGS, MAIN, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
        env: { ...process.env, SIGHTFLOW_LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const lines: string[] = [];
    // A signal death reads as `signal:SIGINT` so assertions say what happened.
    const exited = new Promise<number | null>((r) =>
      child.on('close', (code, signal) => r(code ?? (`signal:${signal}` as unknown as number))),
    );
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === 'sightflow listening') resolve({ child, port: j.port!, lines, exited, stderr: () => stderr });
      } catch {
        /* the key line is plain text */
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}
