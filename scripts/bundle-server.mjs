#!/usr/bin/env node
// Bundles the panel as tsc built it (dist/server.js and every module it imports, node_modules
// included) into one file, dist/panel.mjs, which `npm start` runs; the operator's command line
// (dist/cli.js) into dist/cli.mjs, which `npm run cli` and bin/game-panel run; and the file
// agent (dist/host/remote/file-agent.js) into dist/file-agent.mjs. Node 20 has no compile
// cache, and resolving, reading and compiling some 1,500 small modules one by one was most of
// the panel's start-up (about 0.7 s of 1.3 s here); one file halves it.
//
// Left out, and loaded from node_modules as usual: native addons, which cannot be bundled, and
// the packages that read their own files at run time (Swagger UI's pages, pg's optional native
// binding). A source map sits beside the bundle: `node --enable-source-maps dist/panel.mjs`
// shows stack traces in the original files.
import { cpSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// ssh2 loads its optional native crypto (and cpu-features) with require() of `.node` files.
const PANEL_EXTERNAL = [
  'better-sqlite3',
  'argon2',
  'pg-native',
  '@fastify/swagger-ui',
  'dockerode',
  'ssh2',
];

/**
 * esbuild's options for a bundle of the panel from `entry` (tsc's output, or the TypeScript source
 * itself, as the upgrade test builds it) into `outfile`, leaving `external` out. Exported for that
 * test, so that its bundle is built as this one is (scripts/bundle-server.d.mts declares it).
 */
export function bundleOptions(entry, outfile, external = PANEL_EXTERNAL) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    external,
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as panelCreateRequire } from 'node:module';\nconst require = panelCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}

// Run as a script (not imported): copy the holder, then bundle the server, the command line and
// the file agent.
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

  // The file agent (src/host/remote/file-agent.ts) runs where no node_modules are, in a helper
  // container on a node (docs/nodes.md): everything it imports is in its one file.
  const bundles = [
    { entry: 'dist/server.js', out: 'dist/panel.mjs', external: PANEL_EXTERNAL },
    { entry: 'dist/cli.js', out: 'dist/cli.mjs', external: PANEL_EXTERNAL },
    { entry: 'dist/host/remote/file-agent.js', out: 'dist/file-agent.mjs', external: [] },
  ];

  for (const { entry, out, external } of bundles) {
    await build(bundleOptions(entry, out, external));
  }
}
