/**
 * The egg importer (src/templates/egg.ts): small eggs written here, in every supported version and
 * in both encodings, and broken ones, each of which must answer VALIDATION_FAILED naming the field.
 * Pelican's importer is the reference for its mapping (start commands, placeholders, reserved
 * names); docs/templates.md states it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { EGG_FORMATS, type EggFormat } from '../src/domain/template.js';
import { AppError } from '../src/errors.js';
import { parseEgg, slugify } from '../src/templates/egg.js';

type Egg = Record<string, unknown>;

const UUID = '5e1a2f0c-6f0b-4c8e-9d55-0a1b2c3d4e5f';

/** A small egg of `version` as that panel exports it (JSON strings inside `config`). */
function eggOf(version: EggFormat): Egg {
  const pelican = version.startsWith('PLCN');
  const egg: Egg = {
    _comment: 'written for this test',
    meta: { version, update_url: null },
    uuid: UUID,
    name: 'Paper Test',
    author: 'ops@example.com',
    description: 'A server for the tests.',
    features: ['eula', 'java_version'],
    file_denylist: [],
    config: {
      files: JSON.stringify({
        'server.properties': {
          parser: 'properties',
          find: { 'server-ip': '0.0.0.0', 'server-port': '{{server.build.default.port}}' },
        },
      }),
      startup: JSON.stringify({ done: ')! For help, type ' }),
      logs: '{}',
      stop: 'stop',
    },
    scripts: {
      installation: {
        script: '#!/bin/bash\necho installing',
        container: 'ghcr.io/example/installers:debian',
        entrypoint: 'bash',
      },
    },
    variables: [
      {
        name: 'Jar file',
        description: 'The jar to run.',
        env_variable: 'SERVER_JARFILE',
        default_value: 'server.jar',
        user_viewable: true,
        user_editable: true,
        rules: 'required|regex:/^([\\w\\d._-]+)(\\.jar)$/',
        field_type: 'text',
      },
      {
        name: 'Version',
        description: '',
        env_variable: 'MC_VERSION',
        default_value: 'latest',
        user_viewable: 1,
        user_editable: 0,
        rules: pelican ? ['required', 'string', 'max:20'] : 'required|string|max:20',
      },
    ],
  };
  if (version === 'PTDL_v1') {
    egg.images = ['ghcr.io/example/java:21', 'ghcr.io/example/java:17'];
  } else {
    egg.docker_images = {
      'Java 21': 'ghcr.io/example/java:21',
      'Java 17': 'ghcr.io/example/java:17',
    };
  }
  if (version === 'PLCN_v3') {
    egg.startup_commands = {
      Default: 'java -Xms128M -jar {{SERVER_JARFILE}}',
      'Low memory': 'java -Xmx512M -jar {{SERVER_JARFILE}}',
    };
  } else {
    egg.startup = 'java -Xms128M -jar {{SERVER_JARFILE}}';
  }
  return egg;
}

const ENCODINGS = {
  JSON: (egg: Egg) => JSON.stringify(egg, null, 2),
  YAML: (egg: Egg) => toYaml(egg),
};

/** A copy of `egg` with the field at `path` set to `value` (undefined removes it). */
function withField(egg: Egg, path: readonly (string | number)[], value: unknown): Egg {
  const copy = structuredClone(egg);
  let at: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (value === undefined) Reflect.deleteProperty(at, last);
  else at[last] = value;
  return copy;
}

/** `config` with one field replaced, keeping the rest. */
const withConfig = (egg: Egg, field: string, value: unknown): Egg =>
  withField(egg, ['config', field], value);

const json = (egg: Egg): string => JSON.stringify(egg);

function rejects(text: string, path: string, problem?: RegExp): void {
  assert.throws(
    () => parseEgg(text),
    (error: unknown) => {
      assert.ok(error instanceof AppError, `an AppError, not ${String(error)}`);
      assert.equal(error.code, 'VALIDATION_FAILED');
      assert.equal(error.options.details?.length, 1);
      const [detail] = error.options.details ?? [];
      assert.equal(detail?.path, path, error.message);
      assert.ok(error.message.startsWith(`${path}: `), error.message);
      if (problem !== undefined) assert.match(error.message, problem);
      return true;
    },
  );
}

describe('importing an egg of each version, in JSON and in YAML', () => {
  for (const version of EGG_FORMATS) {
    for (const [encoding, encode] of Object.entries(ENCODINGS)) {
      it(`${version} as ${encoding}`, () => {
        const { format, uuid, definition, warnings } = parseEgg(encode(eggOf(version)));
        assert.equal(format, version);
        assert.equal(uuid, UUID);
        assert.equal(definition.name, 'Paper Test');
        assert.equal(definition.author, 'ops@example.com');
        assert.equal(definition.description, 'A server for the tests.');
        assert.deepEqual(
          definition.startupCommands,
          version === 'PLCN_v3'
            ? [
                { name: 'Default', command: 'java -Xms128M -jar {{SERVER_JARFILE}}' },
                { name: 'Low memory', command: 'java -Xmx512M -jar {{SERVER_JARFILE}}' },
              ]
            : [{ name: 'Default', command: 'java -Xms128M -jar {{SERVER_JARFILE}}' }],
        );
        assert.deepEqual(definition.stop, { type: 'command', command: 'stop' });
        assert.deepEqual(definition.donePatterns, [')! For help, type ']);
        assert.deepEqual(definition.configFiles, [
          {
            file: 'server.properties',
            parser: 'properties',
            replace: [
              { match: 'server-ip', ifValue: null, value: '0.0.0.0' },
              { match: 'server-port', ifValue: null, value: '{{server.build.default.port}}' },
            ],
          },
        ]);
        assert.deepEqual(definition.install, {
          script: '#!/bin/bash\necho installing',
          image: 'ghcr.io/example/installers:debian',
          entrypoint: 'bash',
        });
        assert.deepEqual(
          definition.dockerImages,
          version === 'PTDL_v1'
            ? [
                { name: 'ghcr.io/example/java:21', image: 'ghcr.io/example/java:21' },
                { name: 'ghcr.io/example/java:17', image: 'ghcr.io/example/java:17' },
              ]
            : [
                { name: 'Java 21', image: 'ghcr.io/example/java:21' },
                { name: 'Java 17', image: 'ghcr.io/example/java:17' },
              ],
        );
        assert.deepEqual(definition.features, ['eula', 'java_version']);
        assert.deepEqual(definition.variables, [
          {
            name: 'Jar file',
            description: 'The jar to run.',
            envVariable: 'SERVER_JARFILE',
            defaultValue: 'server.jar',
            userViewable: true,
            userEditable: true,
            rules: ['required', 'regex:/^([\\w\\d._-]+)(\\.jar)$/'],
          },
          {
            name: 'Version',
            description: '',
            envVariable: 'MC_VERSION',
            defaultValue: 'latest',
            userViewable: true,
            userEditable: false,
            rules: ['required', 'string', 'max:20'],
          },
        ]);
        assert.deepEqual(warnings, []);
      });
    }
  }

  it('PTDL_v1 with one `image` instead of `images`', () => {
    const egg = withField(
      withField(eggOf('PTDL_v1'), ['images'], undefined),
      ['image'],
      'quay.io/old:1',
    );
    assert.deepEqual(parseEgg(json(egg)).definition.dockerImages, [
      { name: 'quay.io/old:1', image: 'quay.io/old:1' },
    ]);
  });

  it('a Pelican `image` is the egg’s icon, not a container image', () => {
    const egg = withField(eggOf('PLCN_v3'), ['image'], 'data:image/png;base64,AAAA');
    assert.deepEqual(
      parseEgg(json(egg)).definition.dockerImages.map((d) => d.image),
      ['ghcr.io/example/java:21', 'ghcr.io/example/java:17'],
    );
  });

  it('without a uuid, the uuid is null', () => {
    assert.equal(parseEgg(json(withField(eggOf('PTDL_v2'), ['uuid'], undefined))).uuid, null);
  });

  it('a byte-order mark and a JSON flow mapping in YAML are read', () => {
    assert.equal(parseEgg(`\uFEFF${json(eggOf('PTDL_v2'))}`).definition.name, 'Paper Test');
    const flow = "{meta: {version: PTDL_v2}, name: Flow, startup: './run', docker_images: [img:1]}";
    assert.equal(parseEgg(flow).definition.name, 'Flow');
  });
});

describe('a Pelican YAML export, as Pelican writes it', () => {
  // Native mappings inside `config`, rules as lists, `{  }` for empty lists, a number as a
  // default value, `sort` out of list order, Pelican's placeholder names, a reserved name.
  const yaml = `
_comment: 'DO NOT EDIT: FILE GENERATED AUTOMATICALLY BY PANEL'
meta:
  version: PLCN_v3
  update_url: null
exported_at: '2025-01-15T12:00:00+00:00'
name: 'Proxy Server'
author: ops@example.com
uuid: 7f0e1d2c-3b4a-4596-8877-665544332211
description: |-
  A proxy
  for the tests.
image: null
tags:
  - minecraft
features: {  }
docker_images:
  'Java 21': 'ghcr.io/example/java:21'
file_denylist: {  }
startup_commands:
  Default: 'java -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}} --motd "{{HOSTNAME}}"'
config:
  files:
    config.yml:
      parser: yaml
      find:
        'listeners[0].host': '0.0.0.0:{{server.allocations.default.port}}'
        'listeners[0].query_port': '{{server.allocations.default.port}}'
        'listeners[0].bind': '{{server.allocations.default.ip}}'
        'memory': '{{server.build.memory_limit}}'
        'motd': '{{server.environment.HOSTNAME}}'
        'jar': '{{server.environment.SERVER_JARFILE}}'
        'max_players': 50
        'online_mode': true
  startup:
    done:
      - 'Listening on '
      - 'regex:^Done \\(\\d+'
  logs: {  }
  stop: end
scripts:
  installation:
    script: "#!/bin/ash\\r\\necho hi\\r\\n"
    container: null
    entrypoint: null
variables:
  -
    sort: 2
    name: 'Jar file'
    description: ''
    env_variable: SERVER_JARFILE
    default_value: proxy.jar
    user_viewable: true
    user_editable: true
    rules:
      - required
      - 'regex:/^([\\w\\d._-]+)(\\.jar)$/'
  -
    sort: 1
    name: 'Server name'
    description: 'Shown in the list.'
    env_variable: HOSTNAME
    default_value: 25565
    user_viewable: true
    user_editable: false
    rules:
      - required
      - 'regex:/^(latest|[0-9]+)$/'
`;

  it('maps start commands, placeholders and reserved names as Pelican does', () => {
    const { format, uuid, definition, warnings } = parseEgg(yaml);
    assert.equal(format, 'PLCN_v3');
    assert.equal(uuid, '7f0e1d2c-3b4a-4596-8877-665544332211');
    assert.equal(definition.description, 'A proxy\nfor the tests.');
    assert.deepEqual(definition.features, []);
    // HOSTNAME is reserved: the variable and every whole word of it in the start command.
    assert.deepEqual(definition.startupCommands, [
      {
        name: 'Default',
        command: 'java -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}} --motd "{{SERVER_HOSTNAME}}"',
      },
    ]);
    // Pelican's names in the Pterodactyl form, the renamed variable followed.
    assert.deepEqual(definition.configFiles, [
      {
        file: 'config.yml',
        parser: 'yaml',
        replace: [
          {
            match: 'listeners[0].host',
            ifValue: null,
            value: '0.0.0.0:{{server.build.default.port}}',
          },
          {
            match: 'listeners[0].query_port',
            ifValue: null,
            value: '{{server.build.default.port}}',
          },
          { match: 'listeners[0].bind', ifValue: null, value: '{{server.build.default.ip}}' },
          { match: 'memory', ifValue: null, value: '{{server.build.memory}}' },
          { match: 'motd', ifValue: null, value: '{{server.build.env.SERVER_HOSTNAME}}' },
          { match: 'jar', ifValue: null, value: '{{server.build.env.SERVER_JARFILE}}' },
          { match: 'max_players', ifValue: null, value: '50' },
          { match: 'online_mode', ifValue: null, value: 'true' },
        ],
      },
    ]);
    assert.deepEqual(definition.donePatterns, ['Listening on ', 'regex:^Done \\(\\d+']);
    assert.deepEqual(definition.stop, { type: 'command', command: 'end' });
    // Pelican's default install image, the default entrypoint, Unix line endings.
    assert.deepEqual(definition.install, {
      script: '#!/bin/ash\necho hi\n',
      image: 'ghcr.io/pelican-eggs/installers:debian',
      entrypoint: 'bash',
    });
    // In `sort` order; the number default as text.
    assert.deepEqual(
      definition.variables.map((v) => [v.envVariable, v.defaultValue, v.userEditable]),
      [
        ['SERVER_HOSTNAME', '25565', false],
        ['SERVER_JARFILE', 'proxy.jar', true],
      ],
    );
    assert.deepEqual(warnings, [
      'variables[1] (HOSTNAME): the name is reserved for the panel; renamed to SERVER_HOSTNAME, with every reference to it in the start commands, config files and install script (as Pelican does)',
    ]);
  });
});

describe('placeholders and reserved names', () => {
  it('old Pterodactyl and Pelican placeholder names become the Pterodactyl build values', () => {
    const files = {
      'a.json': {
        parser: 'json',
        find: {
          ip: '{{server.build.env.SERVER_IP}}',
          port: '{{env.SERVER_PORT}}:{{server.build.env.SERVER_PORT}}',
          memory: '{{server.build.env.SERVER_MEMORY}} {{env.SERVER_MEMORY}}',
          pelicanEnv: '{{server.build.environment.LEVEL}}',
          plain: '{{server.build.env.LEVEL}} {{env.LEVEL}} {{LEVEL}} {{config.docker.interface}}',
        },
      },
    };
    const egg = withConfig(eggOf('PLCN_v2'), 'files', files);
    const values = parseEgg(json(egg)).definition.configFiles[0]!.replace.map((r) => r.value);
    assert.deepEqual(values, [
      '{{server.build.default.ip}}',
      '{{server.build.default.port}}:{{server.build.default.port}}',
      '{{server.build.memory}} {{server.build.memory}}',
      '{{server.build.env.LEVEL}}',
      '{{server.build.env.LEVEL}} {{env.LEVEL}} {{LEVEL}} {{config.docker.interface}}',
    ]);
  });

  it('placeholders in start commands are normalised too', () => {
    const egg = withField(
      eggOf('PLCN_v1'),
      ['startup'],
      './run --port {{server.allocations.default.port}}',
    );
    assert.equal(
      parseEgg(json(egg)).definition.startupCommands[0]!.command,
      './run --port {{server.build.default.port}}',
    );
  });

  it('every reserved name is renamed with the SERVER_ prefix, in any version', () => {
    const variables = ['HOME', 'USER', 'server_port', 'STARTUP', 'TZ'].map((env) => ({
      name: env,
      env_variable: env,
      default_value: '',
      rules: '',
    }));
    const egg = withField(
      withField(eggOf('PTDL_v2'), ['variables'], variables),
      ['startup'],
      './run {{HOME}} $USER {{server_port}} {{SERVER_PORT}} HOMER {{STARTUP}} {{TZ}}',
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(
      definition.variables.map((v) => v.envVariable),
      ['SERVER_HOME', 'SERVER_USER', 'SERVER_SERVER_PORT', 'SERVER_STARTUP', 'SERVER_TZ'],
    );
    assert.equal(
      definition.startupCommands[0]!.command,
      './run {{SERVER_HOME}} $SERVER_USER {{SERVER_SERVER_PORT}} {{SERVER_SERVER_PORT}} HOMER {{SERVER_STARTUP}} {{SERVER_TZ}}',
    );
    assert.equal(warnings.length, 5);
  });

  it('a renamed name that another variable already has: the last one is kept, with a warning', () => {
    const variables = [
      { name: 'Home', env_variable: 'HOME', default_value: 'a' },
      { name: 'Server home', env_variable: 'SERVER_HOME', default_value: 'b' },
    ];
    const egg = withField(
      withField(eggOf('PLCN_v3'), ['variables'], variables),
      ['startup_commands'],
      { Default: './run {{HOME}} {{SERVER_HOME}}' },
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(
      definition.variables.map((v) => [v.envVariable, v.name, v.defaultValue]),
      [['SERVER_HOME', 'Server home', 'b']],
    );
    assert.equal(definition.startupCommands[0]!.command, './run {{SERVER_HOME}} {{SERVER_HOME}}');
    assert.ok(
      warnings.includes(
        'variables[0] (HOME): variables[1] has the same name; the last one is kept, as in the panels',
      ),
      warnings.join('\n'),
    );
  });

  it('a lower-case reserved name is renamed, and every reference to it follows', () => {
    // Post Scriptum: `hostname`, and `{{server.build.env.hostname}}` in its config file.
    const variables = [
      { name: 'Name', env_variable: 'hostname', default_value: 'My server', rules: 'required' },
      { name: 'Suffix', env_variable: 'hostname_suffix', default_value: '', rules: '' },
    ];
    const files = {
      'Server.cfg': {
        parser: 'file',
        find: {
          ServerName: 'ServerName={{server.build.env.hostname}}',
          Alias: 'Alias={{env.HostName}} {{server.environment.HOSTNAME}}',
          Other: 'Other={{server.build.env.hostname_suffix}}',
        },
      },
    };
    let egg = withField(eggOf('PTDL_v2'), ['variables'], variables);
    egg = withConfig(egg, 'files', files);
    egg = withField(
      egg,
      ['startup'],
      './run -hostname="{{hostname}}" --name "$hostname" ${hostname:-x} ${#hostname} $hostname_suffix $HOSTNAME',
    );
    egg = withField(
      egg,
      ['scripts', 'installation', 'script'],
      'echo "$hostname" "${hostname}" ${#hostname} $HOSTNAME $hostname_suffix {{hostname}}',
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(
      definition.variables.map((v) => v.envVariable),
      ['SERVER_HOSTNAME', 'hostname_suffix'],
    );
    assert.deepEqual(
      definition.configFiles[0]!.replace.map((r) => r.value),
      [
        'ServerName={{server.build.env.SERVER_HOSTNAME}}',
        'Alias={{env.SERVER_HOSTNAME}} {{server.build.env.SERVER_HOSTNAME}}',
        'Other={{server.build.env.hostname_suffix}}',
      ],
    );
    // Placeholders in any case; `$hostname` as the shell reads it (case-sensitive, whole name);
    // the lower-case `-hostname` flag is no variable and stays; Pelican renames the upper-case
    // word, so `$HOSTNAME` follows too.
    assert.equal(
      definition.startupCommands[0]!.command,
      './run -hostname="{{SERVER_HOSTNAME}}" --name "$SERVER_HOSTNAME" ${SERVER_HOSTNAME:-x} ${#SERVER_HOSTNAME} $hostname_suffix $SERVER_HOSTNAME',
    );
    // The install script has no placeholders (Wings renders none there); `$HOSTNAME` is the
    // shell's own variable for it, and stays.
    assert.equal(
      definition.install?.script,
      'echo "$SERVER_HOSTNAME" "${SERVER_HOSTNAME}" ${#SERVER_HOSTNAME} $HOSTNAME $hostname_suffix {{hostname}}',
    );
    assert.match(warnings.join('\n'), /variables\[0\] \(hostname\): the name is reserved/);
  });
});

describe('what Wings and the panels accept, read with a warning', () => {
  const files = (spec: Record<string, unknown>): Egg => withConfig(eggOf('PTDL_v2'), 'files', spec);

  it('a config file path with a leading / is read inside the server folder', () => {
    const { definition, warnings } = parseEgg(
      json(
        files({
          '/ddnet/data/autoexec_server.cfg': { parser: 'file', find: { sv_port: 'sv_port 1' } },
          '//properties/server.properties': { parser: 'properties', find: { a: 'b' } },
        }),
      ),
    );
    assert.deepEqual(
      definition.configFiles.map((rule) => rule.file),
      ['ddnet/data/autoexec_server.cfg', 'properties/server.properties'],
    );
    assert.deepEqual(warnings, [
      'config.files["/ddnet/data/autoexec_server.cfg"]: the path is read inside the server folder, as Wings does: "ddnet/data/autoexec_server.cfg"',
      'config.files["//properties/server.properties"]: the path is read inside the server folder, as Wings does: "properties/server.properties"',
    ]);
  });

  it('parser "yml" is "yaml", in any case', () => {
    for (const parser of ['yml', 'YML']) {
      const { definition, warnings } = parseEgg(
        json(files({ 'server.yml': { parser, find: { 'network.port': '1' } } })),
      );
      assert.equal(definition.configFiles[0]!.parser, 'yaml');
      assert.deepEqual(warnings, [
        `config.files["server.yml"].parser: "${parser}" is read as "yaml", as Wings does`,
      ]);
    }
  });

  it('an empty key with the file parser replaces every line (OneHourOneLife)', () => {
    const { definition, warnings } = parseEgg(
      json(
        files({
          'settings/port.ini': {
            parser: 'file',
            find: { '': '{{server.allocations.default.port}}' },
          },
          'indented.cfg': { parser: 'file', find: { ' ': 'x' } },
        }),
      ),
    );
    assert.deepEqual(definition.configFiles, [
      {
        file: 'settings/port.ini',
        parser: 'file',
        replace: [{ match: '', ifValue: null, value: '{{server.build.default.port}}' }],
      },
      {
        file: 'indented.cfg',
        parser: 'file',
        replace: [{ match: ' ', ifValue: null, value: 'x' }],
      },
    ]);
    assert.deepEqual(warnings, [
      'config.files["settings/port.ini"].find[""]: an empty key replaces every line of the file, as Wings does',
    ]);
  });

  it('a repeated variable: the last definition is kept, where it stands, with a warning', () => {
    // Mordhau: WINDOWS_INSTALL twice. Another case of the same name follows the one kept.
    const variables = [
      {
        name: 'Flag',
        env_variable: 'WINDOWS_INSTALL',
        default_value: '1',
        rules: 'required|boolean',
      },
      { name: 'Map', env_variable: 'MAP', default_value: 'ffa', rules: 'required' },
      { name: 'Again', env_variable: 'windows_install', default_value: '1', rules: 'in:1' },
    ];
    const egg = withField(
      withField(eggOf('PTDL_v2'), ['variables'], variables),
      ['startup'],
      './run {{WINDOWS_INSTALL}} $WINDOWS_INSTALL {{MAP}}',
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(
      definition.variables.map((v) => [v.envVariable, v.name, v.rules]),
      [
        ['MAP', 'Map', ['required']],
        ['windows_install', 'Again', ['in:1']],
      ],
    );
    assert.equal(
      definition.startupCommands[0]!.command,
      './run {{windows_install}} $windows_install {{MAP}}',
    );
    assert.deepEqual(warnings, [
      'variables[0] (WINDOWS_INSTALL): variables[2] has the same name; the last one is kept, as in the panels',
    ]);
  });

  it('empty rules in a rule list are dropped, as in a string', () => {
    const egg = withField(
      eggOf('PLCN_v3'),
      ['variables', 1, 'rules'],
      ['required', 'string', '', ' ', null],
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(definition.variables[1]!.rules, ['required', 'string']);
    assert.deepEqual(warnings, []);
  });

  it('v1’s images list in a PTDL_v2 egg without docker_images', () => {
    const egg = withField(
      withField(eggOf('PTDL_v2'), ['docker_images'], undefined),
      ['images'],
      ['ghcr.io/parkervcp/yolks:debian'],
    );
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(definition.dockerImages, [
      { name: 'ghcr.io/parkervcp/yolks:debian', image: 'ghcr.io/parkervcp/yolks:debian' },
    ]);
    assert.deepEqual(warnings, [
      'images: PTDL_v2 names its images in docker_images; the images list is used',
    ]);
    // With docker_images, the list is ignored.
    const both = withField(eggOf('PTDL_v2'), ['images'], ['other/image']);
    assert.deepEqual(
      parseEgg(json(both)).definition.dockerImages.map((i) => i.image),
      ['ghcr.io/example/java:21', 'ghcr.io/example/java:17'],
    );
  });

  it('`int` and `nullable:string` are read as what they mean; gt and ends_with are enforced', () => {
    const variables = [
      {
        name: 'Players',
        env_variable: 'MAX_PLAYERS',
        default_value: '0',
        rules: 'required|int|gt:0',
      },
      { name: 'Password', env_variable: 'PASSWORD', default_value: '', rules: 'nullable:string' },
      { name: 'Jar', env_variable: 'JAR', default_value: 'server.zip', rules: 'ends_with:.jar' },
      {
        name: 'Minimum',
        env_variable: 'MIN_PLAYERS',
        default_value: '5',
        rules: 'integer|lte:environment.MAX_PLAYERS|gt:environment.NOPE',
      },
    ];
    const { definition, warnings } = parseEgg(
      json(withField(eggOf('PTDL_v2'), ['variables'], variables)),
    );
    assert.deepEqual(definition.variables[0]!.rules, ['required', 'int', 'gt:0']);
    assert.deepEqual(warnings, [
      'variables[0] (MAX_PLAYERS): rule "int" is read as "integer"',
      'variables[0] (MAX_PLAYERS): the default value "0" fails its own rules: must be greater than 0',
      'variables[1] (PASSWORD): rule "nullable:string" is read as "nullable|string"',
      'variables[2] (JAR): the default value "server.zip" fails its own rules: must end with .jar',
      'variables[3] (MIN_PLAYERS): a rule compares it with NOPE, which is not a variable of this egg; that rule is not enforced',
      'variables[3] (MIN_PLAYERS): the default value "5" fails its own rules: must be at most MAX_PLAYERS',
    ]);
  });
});

describe('config.stop', () => {
  const cases: readonly [unknown, unknown, RegExp | null][] = [
    ['^C', { type: 'signal', signal: 'SIGINT' }, null],
    ['^c', { type: 'signal', signal: 'SIGINT' }, null],
    ['^^C', { type: 'signal', signal: 'SIGKILL' }, null],
    ['^SIGINT', { type: 'signal', signal: 'SIGINT' }, null],
    ['^SIGTERM', { type: 'signal', signal: 'SIGTERM' }, null],
    ['^SIGKILL', { type: 'signal', signal: 'SIGKILL' }, null],
    ['^SIGHUP', { type: 'signal', signal: 'SIGKILL' }, /config\.stop: "\^SIGHUP" is not a signal/],
    ['stop', { type: 'command', command: 'stop' }, null],
    ['quit now', { type: 'command', command: 'quit now' }, null],
    [null, { type: 'signal', signal: 'SIGINT' }, /config\.stop: missing/],
    [undefined, { type: 'signal', signal: 'SIGINT' }, /config\.stop: missing/],
  ];
  for (const [stop, expected, warning] of cases) {
    it(`${stop === undefined ? 'absent' : JSON.stringify(stop)} → ${JSON.stringify(expected)}`, () => {
      const { definition, warnings } = parseEgg(json(withConfig(eggOf('PTDL_v2'), 'stop', stop)));
      assert.deepEqual(definition.stop, expected);
      if (warning === null) assert.deepEqual(warnings, []);
      else
        assert.ok(
          warnings.some((w) => warning.test(w)),
          warnings.join('\n'),
        );
    });
  }

  it('a stop command of more than one line is refused', () => {
    rejects(json(withConfig(eggOf('PTDL_v2'), 'stop', 'save\nstop')), 'config.stop');
  });
});

describe('config.files', () => {
  it('an object value is conditional: one replacement per pair, with ifValue', () => {
    const files = {
      'config.yml': {
        parser: 'yaml',
        find: {
          'servers.*.address': {
            'regex:^(127\\.0\\.0\\.1|localhost)(:\\d{1,5})?$': '{{config.docker.interface}}$2',
            '0.0.0.0': '{{server.allocations.default.ip}}',
          },
          'query.enabled': false,
          'query.port': 25565,
          empty: null,
        },
      },
    };
    for (const encoded of [
      json(withConfig(eggOf('PLCN_v3'), 'files', files)),
      toYaml(withConfig(eggOf('PLCN_v3'), 'files', files)),
    ]) {
      assert.deepEqual(parseEgg(encoded).definition.configFiles[0]!.replace, [
        {
          match: 'servers.*.address',
          ifValue: 'regex:^(127\\.0\\.0\\.1|localhost)(:\\d{1,5})?$',
          value: '{{config.docker.interface}}$2',
        },
        { match: 'servers.*.address', ifValue: '0.0.0.0', value: '{{server.build.default.ip}}' },
        { match: 'query.enabled', ifValue: null, value: 'false' },
        { match: 'query.port', ifValue: null, value: '25565' },
        { match: 'empty', ifValue: null, value: '' },
      ]);
    }
  });

  it('an ifValue pattern RE2 cannot run is dropped with a warning; nested repetition is kept', () => {
    const files = {
      'a.properties': {
        parser: 'properties',
        find: {
          motd: { 'regex:^(a+)+$': 'calm', 'regex:(a)\\1': 'echo', 'regex:a(?=b)': 'peek' },
        },
      },
    };
    const { definition, warnings } = parseEgg(json(withConfig(eggOf('PTDL_v2'), 'files', files)));
    assert.deepEqual(definition.configFiles[0]!.replace, [
      { match: 'motd', ifValue: 'regex:^(a+)+$', value: 'calm' },
    ]);
    const dropped = warnings.filter((warning) => warning.startsWith('config.files'));
    assert.equal(dropped.length, 2, warnings.join('\n'));
    assert.match(
      dropped[0]!,
      /the pattern is not .* linear time .*backreferences are not supported\); this replacement is dropped/,
    );
    assert.match(
      dropped[1]!,
      /lookahead and lookbehind are not supported\); this replacement is dropped/,
    );
  });

  it('every parser Wings has, in any case; empty forms are no files', () => {
    for (const parser of ['properties', 'yaml', 'json', 'ini', 'xml', 'file', 'YAML']) {
      const files = { 'a.cfg': { parser, find: { k: 'v' } } };
      assert.equal(
        parseEgg(json(withConfig(eggOf('PTDL_v2'), 'files', files))).definition.configFiles[0]!
          .parser,
        parser.toLowerCase(),
      );
    }
    for (const empty of ['{}', '[]', '', null, {}, []]) {
      assert.deepEqual(
        parseEgg(json(withConfig(eggOf('PTDL_v2'), 'files', empty))).definition.configFiles,
        [],
      );
    }
  });

  it('a file without `find` is left alone, with a warning', () => {
    const egg = withConfig(eggOf('PTDL_v2'), 'files', { 'a.txt': { parser: 'file' } });
    const { definition, warnings } = parseEgg(json(egg));
    assert.deepEqual(definition.configFiles, []);
    assert.deepEqual(warnings, ['config.files["a.txt"]: has no "find"; the file is left alone']);
  });
});

describe('config.startup', () => {
  const done = (startup: unknown): { patterns: readonly string[]; warnings: string[] } => {
    const { definition, warnings } = parseEgg(
      json(withConfig(eggOf('PTDL_v2'), 'startup', startup)),
    );
    return { patterns: definition.donePatterns, warnings };
  };

  it('done is a text or a list; `regex:` lines are kept as Wings reads them', () => {
    assert.deepEqual(done('{"done": "Ready"}').patterns, ['Ready']);
    assert.deepEqual(done({ done: ['Ready', 'regex:^Done \\(', ''] }).patterns, [
      'Ready',
      'regex:^Done \\(',
    ]);
    assert.deepEqual(done({ done: 'regex:(?i)server started' }).patterns, [
      'regex:(?i)server started',
    ]);
    assert.deepEqual(done('{}').patterns, []);
    assert.deepEqual(done({ userInteraction: [] }).patterns, []);
    assert.deepEqual(done(null).patterns, []);
  });

  it('a done regex RE2 cannot run or that does not compile is dropped, with a warning', () => {
    const { patterns, warnings } = done({
      done: ['Ready', 'regex:^(a+)+$', 'regex:(a)\\1', 'regex:(unclosed', 'regex:(?U)a+'],
    });
    // RE2 runs nested repetition in linear time: kept, as Wings keeps it.
    assert.deepEqual(patterns, ['Ready', 'regex:^(a+)+$', 'regex:(?U)a+']);
    assert.equal(warnings.length, 2);
    assert.match(
      warnings[0]!,
      /^config\.startup\.done\[2\]: "regex:\(a\)\\\\1" is not a regular expression the panel can run in linear time .*backreferences are not supported/,
    );
    assert.match(warnings[1]!, /^config\.startup\.done\[3\]: .*missing closing \)/);
  });
});

describe('scripts.installation', () => {
  const install = (version: EggFormat, installation: unknown) =>
    parseEgg(json(withField(eggOf(version), ['scripts'], { installation }))).definition.install;

  it('an empty or missing script is no install step', () => {
    assert.equal(install('PTDL_v2', { script: '', container: 'alpine', entrypoint: 'ash' }), null);
    assert.equal(install('PTDL_v2', { script: '   \n', container: 'alpine' }), null);
    assert.equal(install('PTDL_v2', { script: null }), null);
    assert.equal(install('PTDL_v2', null), null);
  });

  it('defaults: each panel’s install image, and bash', () => {
    assert.deepEqual(install('PTDL_v1', { script: 'echo a\r\necho b' }), {
      script: 'echo a\necho b',
      image: 'ghcr.io/pterodactyl/installers:alpine',
      entrypoint: 'bash',
    });
    assert.deepEqual(install('PLCN_v2', { script: 'echo', container: '', entrypoint: '' }), {
      script: 'echo',
      image: 'ghcr.io/pelican-eggs/installers:debian',
      entrypoint: 'bash',
    });
    assert.equal(
      install('PTDL_v2', { script: 'echo', entrypoint: '/bin/ash' })?.entrypoint,
      '/bin/ash',
    );
  });
});

describe('warnings', () => {
  it('every unknown rule, a default that fails its own rules, and what the panel ignores', () => {
    const egg = withConfig(
      withField(
        withField(eggOf('PTDL_v2'), ['file_denylist'], ['*.jar', '', '[z-a]']),
        ['variables'],
        [
          { name: 'A', env_variable: 'A', default_value: 'x', rules: 'required|string' },
          {
            name: 'Jar',
            env_variable: 'SERVER_JARFILE',
            default_value: '',
            rules: 'required|foo:bar|regex:/(a)\\1/|max:20',
          },
          {
            name: 'Port',
            env_variable: 'QUERY_PORT',
            default_value: 'abc',
            rules: ['integer', 'exists:ports'],
          },
        ],
      ),
      'extends',
      'c0a95d44-0000-4000-8000-000000000000',
    );
    assert.deepEqual(parseEgg(json(egg)).warnings, [
      'variables[1] (SERVER_JARFILE): rule "foo:bar" is not enforced',
      'variables[1] (SERVER_JARFILE): rule "regex:/(a)\\\\1/" is not enforced',
      'variables[1] (SERVER_JARFILE): the default value "" fails its own rules: is required',
      'variables[2] (QUERY_PORT): rule "exists:ports" is not enforced',
      'variables[2] (QUERY_PORT): the default value "abc" fails its own rules: must be an integer',
      'file_denylist[2] ("[z-a]"): dropped: cannot be compiled (invalid character class range: `z-a`)',
      'config.extends: inheriting from another egg is not supported; only this egg’s own config is used',
    ]);
  });

  it('a default that fails its rules is imported as it is (Pterodactyl does not check defaults)', () => {
    const egg = withField(
      eggOf('PTDL_v2'),
      ['variables'],
      [{ name: 'Pass', env_variable: 'RCON_PASS', default_value: '', rules: 'required|max:64' }],
    );
    assert.equal(parseEgg(json(egg)).definition.variables[0]!.defaultValue, '');
  });
});

describe('variables', () => {
  it('flags are true/false, 1/0 or their texts; absent is false', () => {
    const flags: readonly [unknown, boolean][] = [
      [true, true],
      [1, true],
      ['1', true],
      ['true', true],
      [false, false],
      [0, false],
      ['0', false],
      [undefined, false],
      [null, false],
    ];
    for (const [value, expected] of flags) {
      const egg = withField(eggOf('PTDL_v2'), ['variables', 0, 'user_editable'], value);
      assert.equal(
        parseEgg(json(egg)).definition.variables[0]!.userEditable,
        expected,
        String(value),
      );
    }
  });

  it('default values that are numbers or booleans become text; null becomes empty', () => {
    for (const [value, expected] of [
      [25565, '25565'],
      [true, 'true'],
      [null, ''],
      [1.5, '1.5'],
    ] as const) {
      const egg = withField(eggOf('PLCN_v3'), ['variables', 1, 'default_value'], value);
      assert.equal(parseEgg(toYaml(egg)).definition.variables[1]!.defaultValue, expected);
    }
  });

  it('no variables at all, in any empty form', () => {
    for (const empty of [[], {}, null, undefined]) {
      assert.deepEqual(
        parseEgg(json(withField(eggOf('PTDL_v2'), ['variables'], empty))).definition.variables,
        [],
      );
    }
  });
});

describe('a broken egg answers VALIDATION_FAILED naming the field', () => {
  const v2 = eggOf('PTDL_v2');
  const v3 = eggOf('PLCN_v3');
  const cases: readonly [string, string, string, RegExp?][] = [
    ['not JSON', '{ "meta": { "version": ', '$', /not valid JSON/],
    ['not YAML', 'meta: [unclosed\n  name: x', '$', /not valid YAML/],
    ['YAML with a key twice', 'name: a\nname: b\n', '$', /not valid YAML/],
    ['a list', '[1, 2]', '$', /must be a mapping/],
    ['a YAML scalar', 'just some words', '$', /must be a mapping/],
    ['empty text', '', '$', /must be a mapping/],
    ['null', 'null', '$'],
    [
      'no meta',
      json(withField(v2, ['meta'], undefined)),
      'meta.version',
      /missing; supported: PTDL_v1, PTDL_v2, PLCN_v1, PLCN_v2, PLCN_v3/,
    ],
    [
      'an unknown version',
      json(withField(v2, ['meta', 'version'], 'PTDL_v9')),
      'meta.version',
      /"PTDL_v9" is not supported; supported: PTDL_v1/,
    ],
    ['a version that is a number', json(withField(v2, ['meta', 'version'], 2)), 'meta.version'],
    ['no name', json(withField(v2, ['name'], undefined)), 'name', /missing/],
    ['an empty name', json(withField(v2, ['name'], '  ')), 'name', /empty/],
    [
      'a name of 192 characters',
      json(withField(v2, ['name'], 'n'.repeat(192))),
      'name',
      /longer than 191/,
    ],
    ['a name that is a list', toYaml(withField(v2, ['name'], ['a'])), 'name', /must be a text/],
    ['no startup', json(withField(v2, ['startup'], undefined)), 'startup', /missing/],
    ['an empty startup', json(withField(v2, ['startup'], '')), 'startup', /empty/],
    [
      'PLCN_v3 without start commands',
      json(withField(v3, ['startup_commands'], undefined)),
      'startup_commands',
      /missing/,
    ],
    [
      'PLCN_v3 with no start command',
      json(withField(v3, ['startup_commands'], {})),
      'startup_commands',
      /no command/,
    ],
    [
      'a start command that is not text',
      json(withField(v3, ['startup_commands'], { Default: 5 })),
      'startup_commands["Default"]',
    ],
    [
      'invalid JSON in config.files',
      json(withConfig(v2, 'files', '{"a": ')),
      'config.files',
      /not valid JSON/,
    ],
    [
      'invalid JSON in config.startup',
      json(withConfig(v2, 'startup', '{done: x}')),
      'config.startup',
      /not valid JSON/,
    ],
    [
      'invalid JSON in config.logs',
      json(withConfig(v2, 'logs', '{')),
      'config.logs',
      /not valid JSON/,
    ],
    ['config.files that is a number in JSON', json(withConfig(v2, 'files', '42')), 'config.files'],
    [
      'config.files that is a list of files',
      json(withConfig(v2, 'files', ['a.txt'])),
      'config.files',
    ],
    [
      'config.startup.done that is a number',
      json(withConfig(v2, 'startup', { done: 5 })),
      'config.startup.done',
    ],
    [
      'a done line that is not text',
      json(withConfig(v2, 'startup', { done: ['ok', 5] })),
      'config.startup.done[1]',
    ],
    [
      'an unknown parser',
      json(withConfig(v2, 'files', { 'server.properties': { parser: 'toml', find: {} } })),
      'config.files["server.properties"].parser',
      /"toml" is not a parser; one of properties, yaml, json, ini, xml, file/,
    ],
    [
      'no parser',
      json(withConfig(v2, 'files', { 'a.ini': { find: {} } })),
      'config.files["a.ini"].parser',
      /missing/,
    ],
    [
      'a file spec that is text',
      json(withConfig(v2, 'files', { 'a.ini': 'ini' })),
      'config.files["a.ini"]',
    ],
    [
      'a leading slash that climbs out',
      json(withConfig(v2, 'files', { '/../etc/passwd': { parser: 'file', find: {} } })),
      'config.files["/../etc/passwd"]',
      /"\.\." segments/,
    ],
    [
      'a leading backslash',
      json(withConfig(v2, 'files', { '\\srv\\x.ini': { parser: 'ini', find: {} } })),
      'config.files["\\\\srv\\\\x.ini"]',
      /relative/,
    ],
    [
      'only a slash',
      json(withConfig(v2, 'files', { '/': { parser: 'file', find: {} } })),
      'config.files["/"]',
      /empty/,
    ],
    [
      'an empty key for a parser other than file',
      json(withConfig(v2, 'files', { 'a.json': { parser: 'json', find: { '': 'x' } } })),
      'config.files["a.json"].find[""]',
      /the key is empty/,
    ],
    [
      'a Windows absolute path',
      json(withConfig(v2, 'files', { 'C:\\x.ini': { parser: 'ini', find: {} } })),
      'config.files["C:\\\\x.ini"]',
      /relative/,
    ],
    [
      'a path leaving the folder',
      json(withConfig(v2, 'files', { '../x.yml': { parser: 'yaml', find: {} } })),
      'config.files["../x.yml"]',
      /"\.\." segments/,
    ],
    [
      'a path leaving it later',
      json(withConfig(v2, 'files', { 'a/../../x': { parser: 'file', find: {} } })),
      'config.files["a/../../x"]',
      /"\.\." segments/,
    ],
    [
      'a path with a backslash climb',
      json(withConfig(v2, 'files', { 'a\\..\\..\\x': { parser: 'file', find: {} } })),
      'config.files["a\\\\..\\\\..\\\\x"]',
    ],
    [
      'a path with NUL',
      json(withConfig(v2, 'files', { 'a\u0000b': { parser: 'file', find: {} } })),
      'config.files["a\\u0000b"]',
      /NUL/,
    ],
    [
      'a path with a newline',
      json(withConfig(v2, 'files', { 'a\nb': { parser: 'file', find: {} } })),
      'config.files["a\\nb"]',
      /control/,
    ],
    [
      'a find that is a list',
      json(withConfig(v2, 'files', { 'a.json': { parser: 'json', find: ['x'] } })),
      'config.files["a.json"].find',
    ],
    [
      'a find value that is a list',
      json(withConfig(v2, 'files', { 'a.json': { parser: 'json', find: { x: [1] } } })),
      'config.files["a.json"].find["x"]',
    ],
    [
      'a conditional value that is an object',
      json(
        withConfig(v2, 'files', {
          'a.json': { parser: 'json', find: { x: { old: { deeper: 1 } } } },
        }),
      ),
      'config.files["a.json"].find["x"]["old"]',
    ],
    ['a config that is text', json(withField(v2, ['config'], 'files')), 'config'],
    ['a stop that is a number', json(withConfig(v2, 'stop', 3)), 'config.stop', /must be a text/],
    [
      'variables that are text',
      json(withField(v2, ['variables'], 'SERVER_JARFILE')),
      'variables',
      /must be a list/,
    ],
    [
      'a variable that is text',
      json(withField(v2, ['variables', 1], 'MC_VERSION')),
      'variables[1]',
    ],
    [
      'an env_variable starting with a digit',
      json(withField(v2, ['variables', 1, 'env_variable'], '1VERSION')),
      'variables[1].env_variable',
      /not a variable name/,
    ],
    [
      'an env_variable with a dash',
      json(withField(v2, ['variables', 1, 'env_variable'], 'MC-VERSION')),
      'variables[1].env_variable',
    ],
    [
      'an env_variable with a placeholder',
      json(withField(v2, ['variables', 1, 'env_variable'], '{{X}}')),
      'variables[1].env_variable',
    ],
    [
      'no env_variable',
      json(withField(v2, ['variables', 1, 'env_variable'], undefined)),
      'variables[1].env_variable',
      /missing/,
    ],
    [
      'a variable without a name',
      json(withField(v2, ['variables', 0, 'name'], undefined)),
      'variables[0].name',
    ],
    [
      'a flag that is neither',
      json(withField(v2, ['variables', 0, 'user_viewable'], 'yes')),
      'variables[0].user_viewable',
    ],
    [
      'a default that is a list',
      json(withField(v2, ['variables', 0, 'default_value'], ['a'])),
      'variables[0].default_value',
    ],
    [
      'rules that are a number',
      json(withField(v2, ['variables', 0, 'rules'], 7)),
      'variables[0].rules',
    ],
    [
      'a rule that is not text',
      json(withField(v2, ['variables', 0, 'rules'], ['required', 5])),
      'variables[0].rules[1]',
    ],
    [
      'too many rules',
      json(
        withField(
          v2,
          ['variables', 0, 'rules'],
          Array.from({ length: 51 }, () => 'string'),
        ),
      ),
      'variables[0].rules',
    ],
    [
      'an empty image reference',
      json(withField(v2, ['docker_images'], { Java: '' })),
      'docker_images["Java"]',
      /empty/,
    ],
    [
      'an image reference with spaces',
      json(withField(v2, ['docker_images'], { Java: 'java 21' })),
      'docker_images["Java"]',
    ],
    ['no images', json(withField(v2, ['docker_images'], {})), 'docker_images', /no image/],
    ['no docker_images at all', json(withField(v2, ['docker_images'], undefined)), 'docker_images'],
    [
      'PTDL_v1 with an empty image list',
      json(withField(eggOf('PTDL_v1'), ['images'], [])),
      'images',
    ],
    [
      'PTDL_v1 with an empty image',
      json(withField(eggOf('PTDL_v1'), ['images'], ['a', ' '])),
      'images[1]',
    ],
    [
      'an install image with spaces',
      json(withField(v2, ['scripts', 'installation', 'container'], 'my image')),
      'scripts.installation.container',
    ],
    [
      'an entrypoint with arguments',
      json(withField(v2, ['scripts', 'installation', 'entrypoint'], 'bash -c')),
      'scripts.installation.entrypoint',
    ],
    [
      'a script that is a number',
      json(withField(v2, ['scripts', 'installation', 'script'], 1)),
      'scripts.installation.script',
    ],
    ['a feature that is not text', json(withField(v2, ['features'], ['eula', 1])), 'features[1]'],
    ['a uuid that is a number', json(withField(v2, ['uuid'], 5)), 'uuid'],
    ['an author that is a mapping', json(withField(v2, ['author'], { email: 'x' })), 'author'],
    [
      'more than 100 variables',
      json(
        withField(
          v2,
          ['variables'],
          Array.from({ length: 101 }, (_, i) => ({ name: `V${i}`, env_variable: `V${i}` })),
        ),
      ),
      'variables',
      /more than 100/,
    ],
    [
      'a huge description',
      json(withField(v2, ['description'], 'd'.repeat(65_537))),
      'description',
      /longer than 65536/,
    ],
    [
      'a huge default value',
      json(withField(v2, ['variables', 0, 'default_value'], 'v'.repeat(16_385))),
      'variables[0].default_value',
    ],
    [
      'a huge document',
      json(withField(v2, ['_comment'], 'c'.repeat(2 * 1024 * 1024))),
      '$',
      /longer than/,
    ],
  ];
  for (const [what, text, path, problem] of cases) {
    it(`${what} → ${path}`, () => {
      rejects(text, path, problem);
    });
  }
});

describe('any input answers an import or VALIDATION_FAILED, nothing else', () => {
  /** Either a result, or an AppError VALIDATION_FAILED that names a path. */
  function answersProperly(text: string): void {
    try {
      const imported = parseEgg(text);
      assert.ok(imported.definition.startupCommands.length > 0);
      assert.ok(imported.definition.dockerImages.length > 0);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'VALIDATION_FAILED') throw error;
      const path = error.options.details?.[0]?.path;
      assert.ok(path !== undefined && error.message.startsWith(`${path}: `), error.message);
    }
  }

  const FIELDS: readonly (readonly (string | number)[])[] = [
    ['meta'],
    ['meta', 'version'],
    ['name'],
    ['uuid'],
    ['author'],
    ['description'],
    ['features'],
    ['file_denylist'],
    ['docker_images'],
    ['images'],
    ['image'],
    ['startup'],
    ['startup_commands'],
    ['config'],
    ['config', 'files'],
    ['config', 'startup'],
    ['config', 'logs'],
    ['config', 'stop'],
    ['config', 'extends'],
    ['scripts'],
    ['scripts', 'installation'],
    ['scripts', 'installation', 'script'],
    ['scripts', 'installation', 'container'],
    ['scripts', 'installation', 'entrypoint'],
    ['variables'],
    ['variables', 0],
    ['variables', 1, 'env_variable'],
    ['variables', 1, 'rules'],
    ['variables', 0, 'default_value'],
    ['variables', 0, 'user_viewable'],
    ['variables', 0, 'sort'],
  ];

  it('random text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), answersProperly), {
      numRuns: 300,
    });
  });

  it('random JSON and YAML documents', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, asYaml) => {
        answersProperly(asYaml ? toYaml(value) : JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it('real eggs with a field replaced by anything', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EGG_FORMATS),
        fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 3 })), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.boolean(),
        (version, changes, asYaml) => {
          let egg = eggOf(version);
          for (const [path, value] of changes) {
            try {
              egg = withField(egg, path, value);
            } catch {
              // The path no longer exists after an earlier change: keep the egg as it is.
            }
          }
          answersProperly(asYaml ? toYaml(egg) : JSON.stringify(egg));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('strings inside config that are JSON of anything', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('files', 'startup', 'logs'),
        fc.jsonValue({ maxDepth: 4 }),
        (field, value) => {
          answersProperly(json(withConfig(eggOf('PTDL_v2'), field, JSON.stringify(value))));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('YAML aliases and deep nesting', () => {
    answersProperly('a: &x [*x]\nmeta: {version: PTDL_v2}\n');
    answersProperly(`${'['.repeat(5000)}${']'.repeat(5000)}`);
    answersProperly(`{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    answersProperly(`x: ${'- '.repeat(3000)}a`);
    answersProperly(
      'a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c]',
    );
  });
});

describe('slugify', () => {
  const cases: readonly [string, string][] = [
    ['Minecraft: Java Edition', 'minecraft-java-edition'],
    ['  Paper  ', 'paper'],
    ['Garry’s Mod', 'garry-s-mod'],
    ['Pokémon Ünïcode', 'pokemon-unicode'],
    ['---', 'template'],
    ['', 'template'],
    ['日本語', 'template'],
    ['a'.repeat(39) + ' b c', 'a'.repeat(39)],
    ['x'.repeat(60), 'x'.repeat(40)],
  ];
  for (const [name, slug] of cases) {
    it(`${JSON.stringify(name)} → ${slug}`, () => {
      assert.equal(slugify(name), slug);
    });
  }
});
