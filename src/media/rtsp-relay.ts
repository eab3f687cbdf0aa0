// RTSP through a checked address only. FFmpeg's RTSP client resolves and connects by itself and follows a
// 3xx answer to wherever its Location points, so it never sees the real server: it talks to this loopback
// relay, which connects only to the address the URL policy checked, and passes the server's answers on one
// whole message at a time until the media starts (the first interleaved '$' frame), dropping the connection
// on a redirect instead of passing it on. With TCP interleaved transport (the decoder forces it) the relayed
// connection is the only one the stream uses, so nothing reaches an address that was not checked.
import net, { isIP, type Server, type Socket } from 'node:net';
import tls from 'node:tls';

export interface RtspRelay {
  /** The URL to give FFmpeg: the original path and query on the relay's loopback address. */
  url: string;
  /** Why the relay cut a connection (a redirect it refused), for the error the client sees. */
  refusal: string | null;
  close(): Promise<void>;
}

/** Largest RTSP message head accepted from the server before the media starts. */
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Starts a relay for `url` that connects only to `address` (an IP literal the URL policy allowed). For rtsps
 * the relay is the TLS client (certificate checked against the URL's host name), so it still reads the
 * server's answers in the clear and FFmpeg speaks plain RTSP to it on loopback.
 */
export async function startRtspRelay(
  url: URL,
  address: string,
  tlsOptions: tls.ConnectionOptions = {},
): Promise<RtspRelay> {
  const secure = url.protocol === 'rtsps:';
  const port = url.port ? Number(url.port) : secure ? 322 : 554;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const sockets = new Set<Socket>();
  const relay: RtspRelay = { url: '', refusal: null, close: async () => undefined };
  const server: Server = net.createServer((client) => {
    const upstream = secure
      ? tls.connect({ ...tlsOptions, host: address, port, servername: isIP(host) ? undefined : host })
      : net.connect({ host: address, port });
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    let streaming = false;
    upstream.on('data', (chunk: Buffer) => {
      if (streaming) {
        if (!client.write(chunk)) upstream.pause();
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (pending.length === 0) return;
        if (pending[0] === 0x24 /* '$': interleaved media, the session is set up */) {
          streaming = true;
          client.write(pending);
          pending = Buffer.alloc(0);
          return;
        }
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd < 0) {
          if (pending.length > MAX_HEAD_BYTES) {
            relay.refusal = `the RTSP server sent a message head over ${MAX_HEAD_BYTES} bytes`;
            drop();
          }
          return;
        }
        const head = pending.subarray(0, headEnd).toString('latin1');
        const status = /^RTSP\/\d\.\d\s+(\d{3})/.exec(head);
        if (status && status[1]!.startsWith('3')) {
          const location = /\r\nlocation:\s*([^\r\n]*)/i.exec(head)?.[1] ?? '(no Location)';
          relay.refusal = `the RTSP server redirected to ${location.slice(0, 200)}, which is not followed`;
          return drop();
        }
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        const total = headEnd + 4 + length;
        if (pending.length < total) return;
        client.write(pending.subarray(0, total));
        pending = pending.subarray(total);
      }
    });
    client.on('drain', () => upstream.resume());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port: relayPort } = server.address() as net.AddressInfo;
  const local = new URL(url.toString());
  if (secure) local.protocol = 'rtsp:';
  local.hostname = '127.0.0.1';
  local.port = String(relayPort);
  local.username = url.username;
  local.password = url.password;
  relay.url = local.toString();
  relay.close = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return relay;
}
