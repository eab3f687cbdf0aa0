// The MQTT bench's subscriber, run as its own process (bench/mqtt-subscriber-process.ts starts it): were it in
// the bench's process, its socket reads and packet parsing would share the event loop with the server and the
// SSE readers whose lag it is compared with, and MQTT-on rounds would time their own measurement. It
// subscribes (QoS 1) to the filters given, stamps each message with Date.now() as it arrives and keeps it in
// memory; it prints `ready` once subscribed and nothing more until its stdin closes, then every message as a
// JSON line and exits, so the parent's event loop reads nothing while a round runs.
// Usage: node --import tsx bench/mqtt-subscriber.ts <broker url> <filter>...
import mqtt from 'mqtt';

const [url, ...filters] = process.argv.slice(2);
if (!url || filters.length === 0) {
  process.stderr.write('usage: mqtt-subscriber <broker url> <filter>...\n');
  process.exit(2);
}

const got: { topic: string; payload: Buffer; at: number }[] = [];
const client = mqtt.connect(url, {
  clientId: `bench_${process.pid}_${Math.random().toString(16).slice(2)}`,
  clean: true,
  reconnectPeriod: 200,
  connectTimeout: 5000,
});
client.on('error', (e) => process.stderr.write(`mqtt: ${e.message}\n`));
client.on('message', (topic, payload) => {
  // Stamped first: the decoding waits until the round is over.
  const at = Date.now();
  got.push({ topic, payload, at });
});
client.once('connect', () => {
  client.subscribe(filters, { qos: 1 }, (e) => {
    if (e) {
      process.stderr.write(`subscribe: ${e.message}\n`);
      process.exit(1);
    }
    process.stdout.write('ready\n');
  });
});

process.stdin.resume();
process.stdin.once('end', () => {
  void client.endAsync(true).finally(() => {
    const lines = got.map((m) => JSON.stringify({ ...m, payload: m.payload.toString() })).join('\n');
    process.stdout.write(lines.length > 0 ? lines + '\n' : '', () => process.exit(0));
  });
});
