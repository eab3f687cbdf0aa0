// A real MQTT broker (Debian's `mosquitto`) on loopback for the MQTT tests and bench: a generated config on a
// free port, optionally with persistence in a temporary directory (so a restart keeps retained messages and
// persistent sessions, as a production broker would), stoppable and restartable on the same port; and a
// subscriber that records every message it receives.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { selfSignedCert } from './self-signed-cert.js';
import { stablePort } from './ports.js';

export interface Broker {
  url: string;
  port: number;
  /** With `tls`: the broker's self-signed certificate (PEM), the CA a client must trust. */
  cert?: string;
  /** Stops the broker (SIGTERM: a persistent one saves its state first). */
  stop(): Promise<void>;
  /** Starts it again on the same port; `fresh`: without what a persistent broker saved. */
  start(opts?: { fresh?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export function mosquittoMissing(): string | false {
  return spawnSync('mosquitto', ['-h']).error
    ? 'the mosquitto package is not installed (scripts/system-packages.txt)'
    : false;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = tcpConnect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/**
 * `users`: only these may connect (name -> password); `tls`: mqtts with a self-signed certificate for
 * 127.0.0.1 (openssl), which `cert` returns.
 */
export async function startBroker(
  opts: { persistent?: boolean; users?: Record<string, string>; tls?: boolean } = {},
): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-mosquitto-'));
  // Mosquitto started as root reads its files as the `mosquitto` user.
  chmodSync(dir, 0o755);
  const port = await stablePort();
  const config = join(dir, 'mosquitto.conf');
  const auth = opts.users
    ? [`password_file ${join(dir, 'passwd')}`, 'allow_anonymous false']
    : ['allow_anonymous true'];
  if (opts.users) {
    let first = true;
    for (const [user, password] of Object.entries(opts.users)) {
      execFileSync('mosquitto_passwd', [...(first ? ['-c'] : []), '-b', join(dir, 'passwd'), user, password], {
        stdio: 'ignore',
      });
      first = false;
    }
    chmodSync(join(dir, 'passwd'), 0o644);
  }
  let cert: string | undefined;
  const tls: string[] = [];
  if (opts.tls) {
    selfSignedCert(dir, '127.0.0.1', 'IP:127.0.0.1');
    chmodSync(join(dir, 'key.pem'), 0o644);
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    tls.push(`certfile ${join(dir, 'cert.pem')}`, `keyfile ${join(dir, 'key.pem')}`);
  }
  writeFileSync(
    config,
    [
      `listener ${port} 127.0.0.1`,
      ...tls,
      ...auth,
      'log_dest none',
      // Queued QoS 1 messages for an offline persistent subscriber: the tests' restarts queue a few hundred.
      'max_queued_messages 100000',
      ...(opts.persistent
        ? ['persistence true', `persistence_location ${dir}/`, 'autosave_interval 0']
        : ['persistence false']),
      '',
    ].join('\n'),
  );
  let child: ChildProcess | null = null;
  let stderr = '';
  const start = async (o: { fresh?: boolean } = {}) => {
    if (o.fresh) rmSync(join(dir, 'mosquitto.db'), { force: true });
    child = spawn('mosquitto', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4000);
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    const deadline = Date.now() + 10_000;
    while (!(await listening(port))) {
      if (exited) throw new Error(`mosquitto exited: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${port}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  };
  await start();
  const url = `${opts.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`;
  return {
    url,
    port,
    cert,
    start,
    stop,
    async close() {
      // Subscribers a failed test left open would keep reconnecting, and its process alive, after the broker.
      await Promise.all([...(openSubscribers.get(url) ?? [])].map((c) => c.endAsync(true).catch(() => {})));
      openSubscribers.delete(url);
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The subscribers not closed yet, by broker URL: closing the broker ends them. */
const openSubscribers = new Map<string, Set<MqttClient>>();

export interface Received {
  topic: string;
  payload: string;
  retain: boolean;
  at: number;
}

export interface Subscriber {
  client: MqttClient;
  messages: Received[];
  /** The messages on one topic so far. */
  on(topic: string): Received[];
  /** Waits until `pred` holds over the messages (or throws after `timeoutMs`). */
  until(pred: (m: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A subscriber to `filters` (QoS 1). `clientId` with `persistent`: a session the broker keeps while it is
 * away, so QoS 1 messages published meanwhile reach it when it is back.
 */
export async function subscribe(
  url: string,
  filters: string[],
  opts: { clientId?: string; persistent?: boolean; username?: string; password?: string; ca?: string } = {},
): Promise<Subscriber> {
  const client = mqtt.connect(url, {
    clientId: opts.clientId ?? `test_${Math.random().toString(16).slice(2)}`,
    clean: !opts.persistent,
    reconnectPeriod: 200,
    connectTimeout: 5000,
    username: opts.username,
    password: opts.password,
    ...(opts.ca ? { ca: opts.ca } : {}),
  });
  client.on('error', () => {});
  const open = openSubscribers.get(url) ?? new Set<MqttClient>();
  openSubscribers.set(url, open.add(client));
  const messages: Received[] = [];
  client.on('message', (topic, payload, packet) =>
    messages.push({ topic, payload: payload.toString(), retain: packet.retain, at: Date.now() }),
  );
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    setTimeout(() => reject(new Error('subscriber did not connect')), 10_000).unref();
  });
  await client.subscribeAsync(filters, { qos: 1 });
  return {
    client,
    messages,
    on: (topic) => messages.filter((m) => m.topic === topic),
    async until(pred, timeoutMs = 10_000, what = 'messages') {
      const end = Date.now() + timeoutMs;
      while (!pred(messages)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${messages.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => {
      open.delete(client);
      return client.endAsync(true);
    },
  };
}
