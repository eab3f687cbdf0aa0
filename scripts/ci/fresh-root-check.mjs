// The fresh-root check's requests, with nothing but Node itself: readiness, one detection that must find a
// person, and the printed admin token against the admin API and the console.
// usage: node fresh-root-check.mjs <base-url> <api-key> <admin-token> <image>
import { readFileSync } from 'node:fs';

const [base, key, admin, image] = process.argv.slice(2);
const check = (ok, what) => {
  if (!ok) throw new Error(what);
  console.log(`  ok: ${what}`);
};

let ready = null;
for (const until = Date.now() + 120_000; Date.now() < until; await new Promise((r) => setTimeout(r, 1000))) {
  ready = await fetch(`${base}/readyz`).catch(() => null);
  if (ready?.status === 200) break;
}
check(ready?.status === 200, `GET /readyz -> 200 (got ${ready?.status ?? 'no answer'})`);

const t = Date.now();
const detect = await fetch(`${base}/v1/vision/detect`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ image_base64: readFileSync(image).toString('base64') }),
});
const body = await detect.json();
const people = (body.objects ?? []).filter((o) => o.class === 'person');
check(
  detect.status === 200 && people.length > 0,
  `POST /v1/vision/detect -> ${detect.status}, person found (${people.map((p) => p.confidence).join(', ') || JSON.stringify(body)}) in ${Date.now() - t} ms`,
);

const projects = await fetch(`${base}/admin/v1/projects`, { headers: { authorization: `Bearer ${admin}` } });
const list = await projects.json();
check(
  projects.status === 200 && JSON.stringify(list).includes('"default"'),
  `GET /admin/v1/projects with the printed admin token -> ${projects.status}`,
);
const wrong = await fetch(`${base}/admin/v1/projects`, { headers: { authorization: 'Bearer sf_admin_wrong' } });
check(wrong.status === 401, `a wrong admin token -> ${wrong.status}`);
const consolePage = await fetch(`${base}/console`);
check(consolePage.status === 200 && (await consolePage.text()).includes('<'), `GET /console -> ${consolePage.status}`);
