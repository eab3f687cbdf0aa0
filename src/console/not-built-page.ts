// What /console answers when setup has not built the front end yet: a short HTML page for browsers, the usual
// error JSON for everything else, both 503 so monitoring sees it is not a working console.
import { errors, type ErrorBody } from '../base/errors.js';

export const NOT_BUILT_MESSAGE =
  'The web console has not been built. Run scripts/setup.sh (or: npx vite build --config console/vite.config.ts) and reload.';

export function notBuiltPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sightflow console not built</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<h1>Console not built</h1>
<p>${NOT_BUILT_MESSAGE}</p>
<p>The API itself is running: see <a href="/openapi.json">/openapi.json</a>.</p>
</body></html>
`;
}

export function notBuiltJson(): ErrorBody {
  return errors.consoleNotBuilt(NOT_BUILT_MESSAGE).toBody();
}
