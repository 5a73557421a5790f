/**
 * The panel's own templates, written here in the egg format (PTDL_v2) and imported through the
 * same importer as any egg when the panel starts with no template at all (docs/templates.md).
 * They run what Debian packages: `apt-get install minetest-server` or `openttd openttd-opengfx`
 * on the host for the process runtime.
 */

import { NO_CONSOLE_INPUT } from '../domain/template.js';

const meta = { version: 'PTDL_v2', update_url: null };

/**
 * OpenTTD with the newest save of save/autosave/ (the monthly autosaves, and exit.sav written at
 * a stop), or a new map when there is none: a restart goes on with the same game. POSIX sh, so
 * that it runs under sh and bash alike; a save's name reaches OpenTTD as one argument.
 */
export const OPENTTD_STARTUP =
  'save=$(ls -1t save/autosave/*.sav 2>/dev/null | head -n 1); ' +
  'if [ -n "$save" ]; then echo "Loading the newest save: $save"; set -- -g "$save"; fi; ' +
  'exec /usr/games/openttd -D {{server.build.default.ip}}:{{server.build.default.port}} -c openttd.cfg "$@"';
const AUTHOR = 'game-panel';

const generic = {
  meta,
  uuid: 'game-panel-generic-command',
  name: 'Generic command',
  author: AUTHOR,
  description:
    'Runs one command line in the server folder (through bash, so pipes and && work). Stopped with Ctrl+C (SIGINT).',
  features: [],
  docker_images: { 'Debian (build it locally)': 'game-panel/debian:bookworm' },
  file_denylist: [],
  startup: '{{COMMAND}}',
  config: { files: '{}', startup: '{}', logs: '{}', stop: '^C' },
  scripts: {
    installation: { script: '', container: 'game-panel/debian:bookworm', entrypoint: 'sh' },
  },
  variables: [
    {
      name: 'Command',
      description: 'The program and its arguments, run in the server folder.',
      env_variable: 'COMMAND',
      default_value: './start.sh',
      user_viewable: true,
      user_editable: false,
      rules: 'required|string|max:1000',
      field_type: 'text',
    },
  ],
};

const minetest = {
  meta,
  uuid: 'game-panel-minetest-debian',
  name: 'Minetest (Debian)',
  author: AUTHOR,
  description:
    "Debian's minetest-server (apt-get install minetest-server), with its configuration, world and log file inside the server folder.",
  // Minetest reads nothing from its console: the console tab says so (docs/templates.md).
  features: [NO_CONSOLE_INPUT],
  docker_images: { 'Debian with minetest-server (build it locally)': 'game-panel/minetest:5' },
  file_denylist: [],
  // The binary itself: Debian's /usr/games/minetestserver wrapper writes its log to /var/log.
  startup:
    '/usr/lib/minetest/minetestserver --config minetest.conf --logfile minetest.log --port {{server.build.default.port}} --world worlds/{{WORLD}} --gameid {{GAME}}',
  config: {
    files: JSON.stringify({
      'minetest.conf': {
        parser: 'file',
        find: {
          'server_name ': 'server_name = {{SERVER_NAME}}',
          'port ': 'port = {{server.build.default.port}}',
          'max_users ': 'max_users = {{MAX_USERS}}',
        },
      },
    }),
    startup: JSON.stringify({ done: 'listening on' }),
    logs: '{}',
    stop: '^C',
  },
  scripts: {
    installation: {
      container: 'game-panel/minetest:5',
      entrypoint: 'sh',
      script: [
        '#!/bin/sh',
        '# Makes the folders and a first minetest.conf; the panel keeps its name, port and',
        '# player limit in line with the variables before each start.',
        'set -e',
        'cd /mnt/server',
        'mkdir -p worlds',
        'if [ ! -f minetest.conf ]; then',
        '  printf "%s\\n" "server_name = Minetest" "server_announce = false" "port = 30000" "max_users = 15" "enable_damage = true" > minetest.conf',
        'fi',
        'echo "minetest.conf and worlds/ are ready"',
      ].join('\n'),
    },
  },
  variables: [
    {
      name: 'Server name',
      description: 'Shown to players in the server list.',
      env_variable: 'SERVER_NAME',
      default_value: 'Minetest',
      user_viewable: true,
      user_editable: true,
      rules: 'required|string|max:80',
      field_type: 'text',
    },
    {
      name: 'World',
      description: 'The folder of the world under worlds/; a new one is made if missing.',
      env_variable: 'WORLD',
      default_value: 'world',
      user_viewable: true,
      user_editable: true,
      rules: 'required|alpha_dash|max:64',
      field_type: 'text',
    },
    {
      name: 'Game',
      description: 'The game the world plays (minetest_game ships with Debian).',
      env_variable: 'GAME',
      default_value: 'minetest_game',
      user_viewable: true,
      user_editable: false,
      rules: 'required|alpha_dash|max:64',
      field_type: 'text',
    },
    {
      name: 'Maximum players',
      description: 'How many players may be on the server at once.',
      env_variable: 'MAX_USERS',
      default_value: '15',
      user_viewable: true,
      user_editable: true,
      rules: 'required|integer|between:1,1000',
      field_type: 'text',
    },
  ],
};

const openttd = {
  meta,
  uuid: 'game-panel-openttd-debian',
  name: 'OpenTTD (Debian)',
  author: AUTHOR,
  description:
    "Debian's OpenTTD as a dedicated server (openttd -D; apt-get install openttd openttd-opengfx). Typing quit in the console stops it cleanly; the game is saved then and loaded again at the next start.",
  features: [],
  docker_images: { 'Debian with openttd (build it locally)': 'game-panel/openttd:13' },
  file_denylist: [],
  startup: OPENTTD_STARTUP,
  config: {
    files: JSON.stringify({
      'openttd.cfg': {
        parser: 'ini',
        // Saved at a stop (save/autosave/exit.sav), beside the monthly autosaves.
        find: {
          'network.server_port': '{{server.build.default.port}}',
          'gui.autosave_on_exit': 'true',
        },
      },
      'private.cfg': {
        parser: 'ini',
        find: { 'network.server_name': '{{SERVER_NAME}}' },
      },
    }),
    // A new map: "Map generated, starting game"; a saved game, loaded before the network
    // starts: the network's revision line, its last line at a start (a new map prints it too,
    // just before generating, which takes a few seconds).
    startup: JSON.stringify({ done: ['starting game', 'Network revision name'] }),
    logs: '{}',
    stop: 'quit',
  },
  scripts: { installation: { script: '', container: 'game-panel/openttd:13', entrypoint: 'sh' } },
  variables: [
    {
      name: 'Server name',
      description: 'Shown to players in the server list.',
      env_variable: 'SERVER_NAME',
      default_value: 'OpenTTD',
      user_viewable: true,
      user_editable: true,
      rules: 'required|string|max:80',
      field_type: 'text',
    },
  ],
};

/** The eggs imported at the panel's first start, in this order. */
export const SHIPPED_EGGS: readonly object[] = [generic, minetest, openttd];
