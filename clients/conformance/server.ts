// The conformance server both SDKs run against (cases in ./cases.json): a real sightflow on port 0 (the
// test harness's app, with the synthetic video provider so tasks finish in milliseconds), the fault proxy
// in front of it (./fault-proxy.ts), and a webhook sink that keeps every delivery the server sends.
// In process: `startConformance()`. From another language: `node --import tsx clients/conformance/server.ts`
// prints one JSON line {url, upstream, key, admin_token, control} and serves until stdin closes; the control
// API takes POST /arm (a Fault), POST /reset, GET /seen, GET /cuts and GET /webhooks.
import { createServer, type Server } from 'node:http';
import { readFileSync, realpathSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { SyntheticProvider } from '../../test/helpers/synthetic-provider.js';
import { FaultProxy, type Fault } from './fault-proxy.js';

/** A photo every case may upload (a JPEG of a person). */
export const SAMPLE_IMAGE = join(projectRoot, 'assets', 'astronaut.jpg');

export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

export interface Conformance {
  app: TestApp;
  /** The proxy's URL: what the SDK under test is given. */
  url: string;
  /** The server itself, bypassing the proxy (to set things up or look at them). */
  upstream: string;
  key: string;
  adminToken: string;
  proxy: FaultProxy;
  /** Where webhook deliveries go: `${webhookUrl}/<anything>`. */
  webhookUrl: string;
  /** SAMPLE_IMAGE served over loopback HTTP. */
  imageUrl: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startConformance(): Promise<Conformance> {
  const app = await startTestApp(
    { SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: '100', SIGHTFLOW_KEY_CACHE_MS: '3600000' },
    { videoProviders: () => [new SyntheticProvider()] },
  );
  const proxy = new FaultProxy(app.url);
  const url = await proxy.start();
  const deliveries: Delivery[] = [];
  const sink = createServer((req, res) => {
    if (req.method === 'GET') {
      // The sample image, for the cases that give an image by URL.
      if (req.url !== '/astronaut.jpg') return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(readFileSync(SAMPLE_IMAGE));
    }
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      deliveries.push({ headers, body: Buffer.concat(parts).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  const webhookUrl = await listen(sink);
  return {
    app,
    url,
    upstream: app.url,
    key: app.key,
    adminToken: app.adminToken,
    proxy,
    webhookUrl,
    deliveries,
    imageUrl: `${webhookUrl}/astronaut.jpg`,
    async close() {
      await proxy.stop();
      sink.closeAllConnections();
      await new Promise<void>((resolve) => sink.close(() => resolve()));
      await app.close();
    },
  };
}

/** The control API for SDKs in other languages. */
async function serveControl(c: Conformance): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      try {
        if (req.method === 'POST' && path === '/arm') {
          c.proxy.arm(JSON.parse(Buffer.concat(parts).toString('utf8')) as Fault);
          return send(200, { ok: true });
        }
        if (req.method === 'POST' && path === '/reset') {
          c.proxy.reset();
          c.deliveries.length = 0;
          return send(200, { ok: true });
        }
        if (path === '/seen') return send(200, c.proxy.seen);
        if (path === '/cuts') return send(200, c.proxy.cuts);
        if (path === '/webhooks') return send(200, c.deliveries);
        send(404, { error: 'unknown control path' });
      } catch (err) {
        send(400, { error: String(err) });
      }
    });
  });
  return { url: await listen(server), server };
}

if (import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? '.')).href) {
  const c = await startConformance();
  const control = await serveControl(c);
  process.stdout.write(
    `${JSON.stringify({ url: c.url, upstream: c.upstream, key: c.key, admin_token: c.adminToken, control: control.url, webhook_url: c.webhookUrl, image_url: c.imageUrl, image_path: SAMPLE_IMAGE })}\n`,
  );
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    control.server.closeAllConnections();
    control.server.close();
    await c.close();
    process.exit(0);
  };
  process.stdin.on('end', () => {
    void shutdown();
  });
  process.stdin.on('close', () => {
    void shutdown();
  });
  process.stdin.resume();
  process.on('SIGTERM', () => {
    void shutdown();
  });
}
