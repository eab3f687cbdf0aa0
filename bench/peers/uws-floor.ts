// The http bench's floor: the same route (/v1/project) on the same uWS build with nothing of ours around it:
// the key checked against an in-memory map, a reply of the same bytes as sightflow's (a body of the same
// shape and length, the same two headers with a request id of the same length, made once), no log line, no
// router, no auth cache expiry. What it costs per request is what any server on this uWS build in Node pays
// at least; the gap between it and sightflow is sightflow's own work. Prints `port N` and a key.
import { randomBytes } from 'node:crypto';
import { uws } from '../../src/http/uws.js';

const key = `sk_sf_${randomBytes(32).toString('base64url').slice(0, 43)}`;
const principals = new Map([[`Bearer ${key}`, 'proj_floor']]);
const body = JSON.stringify({
  id: 'proj_floor0123456789abcde',
  object: 'project',
  name: 'default',
  created_at: new Date().toISOString(),
});
const requestId = `req_${'0'.repeat(32)}`;
const app = uws.App();
app.get('/v1/project', (res, req) => {
  const project = principals.get(req.getHeader('authorization'));
  res.cork(() => {
    if (!project) {
      res
        .writeStatus('401 Unauthorized')
        .writeHeader('Content-Type', 'application/json')
        .end('{"error":{"code":"invalid_api_key"}}');
      return;
    }
    res
      .writeStatus('200 OK')
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('x-request-id', requestId)
      .end(body);
  });
});
app.get('/readyz', (res) => {
  res.end('ok');
});
app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) throw new Error('could not listen');
  process.stdout.write(`port ${uws.us_socket_local_port(sock as never)}\nkey ${key}\n`);
});
