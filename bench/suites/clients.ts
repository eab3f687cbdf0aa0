// `npm run bench -- clients [--quick] [--json] [--clients 64]`: what the TypeScript SDK (clients/typescript)
// costs a caller, against its peers in the same run.
// 1. Overhead: POST /v1/vision/detect with a 640x480 JPEG (base64 JSON), one call at a time, the SDK's
//    vision.detect alternated with raw fetch of the same body (built per call, as a hand-written client does); p50 of each and the difference (goal: the SDK
//    adds at most 0.3 ms at p50). The same for GET /healthz, where the server's work is smallest and the
//    SDK's own cost shows best, and for the same upload to a loopback stub that answers at once (`stub`: the
//    model's time and its variance leave the comparison). The added cost is the median of the pairs' differences.
// 2. Refusals under load: C callers (default 64) calling detect back to back for a few seconds, through the
//    SDK (bench/sdk-clients.ts, a process of its own) and as the serve bench's C clients
//    (bench/peers/post-clients.c), alternated: images/s and the 503s the server answered. The SDK honours
//    Retry-After as the C clients do, so it should cause no more refusals than they do.
// The server runs in this process (the C and SDK clients in their own); other work on the machine shows in
// both sides of each comparison alike.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { startApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/base/log.js';
import { projectRoot } from '../../src/base/paths.js';
import { Sightflow } from '../../clients/typescript/src/index.js';
import { compilePeer } from '../peers/compile.js';

const SDK_CLIENTS = fileURLToPath(new URL('../sdk-clients.ts', import.meta.url));

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

interface Load {
  who: string;
  ips: number;
  ok: number;
  refused: number;
  errors: number;
  p50: number;
}

function child(
  cmd: string,
  args: string[],
): Promise<{ wall_ms: number; ok: number; refused: number; errors: number; ms: number[] }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const out: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(Buffer.concat(out).toString())) : reject(new Error(`${cmd} exited with ${code}`)),
    );
  });
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  const samples = quick ? { detect: 8, health: 40, stub: 40 } : { detect: 100, health: 1000, stub: 1000 };
  const clients = Number(argValue(args, 'clients') ?? 64);
  const loadMs = quick ? 1000 : 6000;
  const rounds = quick ? 1 : 2;
  const jpeg = await sharp(join(projectRoot, 'assets', 'astronaut.jpg'))
    .resize(640, 480, { fit: 'fill' })
    .jpeg({ quality: 90 })
    .toBuffer();
  const image = `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  const body = JSON.stringify({ image_base64: image });

  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-bench-clients-'));
  const config = loadConfig(
    {
      ...process.env,
      SIGHTFLOW_LOG_LEVEL: 'silent',
      SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    },
    { port: 0, host: '127.0.0.1', dataDir },
  );
  const app = await startApp(config, createLogger('silent'));
  const peer = compilePeer('post-clients', 'clients');
  try {
    await app.services.models.ready;
    const key = app.bootstrapKey!;
    const base = `http://127.0.0.1:${app.port}`;
    const sdk = new Sightflow({ baseURL: base, apiKey: key });
    const raw: Record<'detect' | 'health' | 'stub', () => Promise<void>> = {
      stub: async () => {},
      detect: async () => {
        // A hand-written client builds its body per call, as the SDK does.
        const r = await fetch(`${base}/v1/vision/detect`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ image_base64: image }),
        });
        if (r.status !== 200) throw new Error(`detect answered ${r.status}`);
        await r.json();
      },
      health: async () => {
        await (await fetch(`${base}/healthz`)).json();
      },
    };
    const viaSdk: Record<'detect' | 'health' | 'stub', () => Promise<void>> = {
      stub: async () => {},
      detect: async () => {
        await sdk.vision.detect(image);
      },
      health: async () => {
        await sdk.call('system.health');
      },
    };
    // The same upload to a loopback server that reads it and answers a detect answer at once: the model's
    // time (and its variance on a busy machine) leaves the comparison, the client's work stays.
    const answer = JSON.stringify(await sdk.vision.detect(image));
    const stub = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    });
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    const stubBase = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
    const stubSdk = new Sightflow({ baseURL: stubBase, apiKey: key });
    Object.assign(raw, {
      stub: async () => {
        await (
          await fetch(`${stubBase}/v1/vision/detect`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ image_base64: image }),
          })
        ).json();
      },
    });
    Object.assign(viaSdk, {
      stub: async () => {
        await stubSdk.vision.detect(image);
      },
    });
    console.log(
      `clients: ${availableParallelism()} cores, 640x480 JPEG, ${quick ? 'quick' : 'full'} run; latency in ms (other work on the machine shows in both sides alike)`,
    );
    const overhead: Record<string, { sdk: number; fetch: number; added: number; n: number }> = {};
    for (const what of ['health', 'stub', 'detect'] as const) {
      for (let i = 0; i < 3; i++) {
        await raw[what]();
        await viaSdk[what]();
      }
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < samples[what]; i++) {
        // Alternated, and in both orders, so that drift and whatever ran just before hit both alike.
        const order =
          i % 2 === 0
            ? ([
                [raw, a],
                [viaSdk, b],
              ] as const)
            : ([
                [viaSdk, b],
                [raw, a],
              ] as const);
        for (const [fns, out] of order) {
          const t = performance.now();
          await fns[what]();
          out.push(performance.now() - t);
        }
      }
      // The added cost is the median of each pair's difference: a pair's two calls ran next to each other, so
      // load from other processes mostly cancels out of it.
      overhead[what] = {
        fetch: pct(a, 0.5),
        sdk: pct(b, 0.5),
        added: pct(
          b.map((x, i) => x - a[i]!),
          0.5,
        ),
        n: samples[what],
      };
      const o = overhead[what]!;
      console.log(
        `  ${what.padEnd(11)} p50 fetch ${o.fetch.toFixed(3)} sdk ${o.sdk.toFixed(3)} added (median of pairs) ${o.added.toFixed(3)} (${o.n} calls each, alternated)`,
      );
    }

    const bodyFile = join(dataDir, 'detect.json');
    writeFileSync(bodyFile, body);
    const loads: Load[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const who of peer ? ['sdk', 'c'] : ['sdk']) {
        const o =
          who === 'sdk'
            ? await child(process.execPath, [
                '--import',
                'tsx',
                SDK_CLIENTS,
                String(app.port),
                key,
                bodyFile,
                String(clients),
                String(loadMs),
              ])
            : await child(peer!.exe, [
                String(app.port),
                '/v1/vision/detect',
                key,
                bodyFile,
                String(clients),
                String(loadMs),
              ]);
        const l: Load = {
          who,
          ips: o.ok / (o.wall_ms / 1000),
          ok: o.ok,
          refused: o.refused,
          errors: o.errors,
          p50: pct(o.ms, 0.5),
        };
        loads.push(l);
        console.log(
          `  c${clients} ${who === 'sdk' ? 'SDK' : 'C  '} ${l.ips.toFixed(2)} images/s p50 ${l.p50.toFixed(0)} 503s ${l.refused}${l.errors ? ` errors ${l.errors}` : ''}`,
        );
      }
    }
    stub.closeAllConnections();
    stub.close();
    const sum = (who: string, k: 'refused' | 'ok') => loads.filter((l) => l.who === who).reduce((n, l) => n + l[k], 0);
    if (peer)
      console.log(
        `  503s in ${rounds} x ${loadMs / 1000} s: SDK ${sum('sdk', 'refused')}, C ${sum('c', 'refused')} (the SDK's should be no more)`,
      );
    if (json) {
      console.log(
        JSON.stringify({
          bench: 'clients',
          quick,
          overhead_ms: Object.fromEntries(
            Object.entries(overhead).map(([k, v]) => [
              k,
              { fetch_p50: +v.fetch.toFixed(3), sdk_p50: +v.sdk.toFixed(3), added_p50: +v.added.toFixed(3), n: v.n },
            ]),
          ),
          load: {
            clients,
            ms: loadMs,
            runs: loads.map((l) => ({
              who: l.who,
              ips: +l.ips.toFixed(2),
              ok: l.ok,
              refused: l.refused,
              errors: l.errors,
              p50_ms: Math.round(l.p50),
            })),
          },
        }),
      );
    }
  } finally {
    await app.stop();
    if (peer) rmSync(peer.dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
