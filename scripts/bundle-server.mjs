#!/usr/bin/env node
// Bundles the panel as tsc built it (dist/server.js and every module it imports, node_modules
// included) into one file, dist/panel.mjs, which `npm start` runs; and the operator's command
// line (dist/cli.js) into dist/cli.mjs, which `npm run cli` and bin/game-panel run. Node 20 has no compile cache,
// and resolving, reading and compiling some 1,500 small modules one by one was most of the
// panel's start-up (about 0.7 s of 1.3 s here); one file halves it.
//
// Left out, and loaded from node_modules as usual: native addons, which cannot be bundled, and
// the packages that read their own files at run time (Swagger UI's pages, pg's optional native
// binding). A source map sits beside the bundle: `node --enable-source-maps dist/panel.mjs`
// shows stack traces in the original files.
import { cpSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * esbuild's options for a bundle of the panel from `entry` (tsc's output, or the TypeScript source
 * itself, as the upgrade test builds it) into `outfile`. Exported for that test, so that its
 * bundle is built as this one is (scripts/bundle-server.d.mts declares it).
 */
export function bundleOptions(entry, outfile) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // ssh2 loads its optional native crypto (and cpu-features) with require() of `.node` files.
    external: ['better-sqlite3', 'argon2', 'pg-native', '@fastify/swagger-ui', 'dockerode', 'ssh2'],
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as panelCreateRequire } from 'node:module';\nconst require = panelCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}

// Run as a script (not imported): copy the holder, then bundle the server and the command line.
// (Node runs a script from its real path: the path it was named by may pass through a link.)
if (
  process.argv[1] !== undefined &&
  fileURLToPath(import.meta.url) === realpathSync(process.argv[1])
) {
  // The holder of a game server runs from its source (plain JavaScript, no build); the panel
  // imports its protocol module, which tsc does not copy into dist/.
  cpSync('src/host/runtime/process/holder', 'dist/host/runtime/process/holder', {
    recursive: true,
    filter: (file) => !file.endsWith('.d.mts'),
  });

  const bundles = [
    { entry: 'dist/server.js', out: 'dist/panel.mjs' },
    { entry: 'dist/cli.js', out: 'dist/cli.mjs' },
  ];

  for (const { entry, out } of bundles) await build(bundleOptions(entry, out));
}
