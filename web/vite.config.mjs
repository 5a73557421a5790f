// @ts-check
// The web UI's build: web/ → dist/web, served by the panel (src/http/web.ts). Every file the build
// writes is also written compressed (`.br`, `.gz`) so the panel sends it precompressed.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig } from 'vitest/config';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '../dist/web');
const COMPRESSIBLE = /\.(?:js|css|html|svg|json|txt)$/;

/** @returns {import('vite').Plugin} */
function precompress() {
  return {
    name: 'panel-precompress',
    apply: 'build',
    closeBundle() {
      for (const entry of readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
        const file = path.join(outDir, entry);
        if (!COMPRESSIBLE.test(file) || !statSync(file).isFile()) continue;
        const bytes = readFileSync(file);
        if (bytes.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
    },
  };
}

export default defineConfig({
  root: here,
  base: '/',
  plugins: [precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    // Nothing inlined as data: URLs, so the policy's img-src/font-src stay 'self'.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      onwarn(warning, warn) {
        // React Server Components' "use client" markers mean nothing in a client-only bundle.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
  server: {
    // `npm run dev:web`: the UI with hot reload, the API from a panel on :8000.
    proxy: { '/api': 'http://127.0.0.1:8000', '/ws': { target: 'ws://127.0.0.1:8000', ws: true } },
  },
  test: {
    root: here,
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
