// Builds the console into console/dist, served by sightflow itself at /console (src/console). No dev server or
// plugin is needed: Preact's JSX runtime is set through the transform options, everything is bundled locally
// (no CDN), and file names carry content hashes so the server can cache them for good.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
