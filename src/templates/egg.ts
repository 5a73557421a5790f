/**
 * Reads a Pterodactyl or Pelican egg (JSON or YAML; PTDL_v1, PTDL_v2, PLCN_v1–v3) into a
 * TemplateDefinition. Pure: no database, no files. What the two panels' importers do, and what
 * this one does differently, is in docs/templates.md ("Importing eggs: the mapping").
 *
 * Contract: for any text, it returns an ImportedEgg or throws AppError VALIDATION_FAILED whose one
 * detail names the field of the egg that is wrong (`variables[2].env_variable`,
 * `config.files["server.properties"].parser`), or `$` for the document as a whole.
 *
 * This file reads the document, its format and its images, install script and features; the
 * rest is read beside it: egg-variables.ts (variables and their rules), egg-startup.ts (start
 * commands, placeholders, stop, done lines), egg-config-files.ts (`config.files`), on the
 * readers of egg-fields.ts.
 */
import { parseDocument } from 'yaml';
import {
  EGG_FORMATS,
  NO_CONSOLE_INPUT,
  type EggFormat,
  type InstallScript,
  type TemplateDefinition,
} from '../domain/template.js';
import { readDenylist } from './denylist.js';
import { readConfigFiles, readConfigLogs } from './egg-config-files.js';
import {
  CONTROL,
  describe,
  EGG_LIMITS,
  errorText,
  invalid,
  isRecord,
  key,
  list,
  optionalRecord,
  optionalText,
  own,
  record,
  requiredText,
  type Json,
} from './egg-fields.js';
import { renameShellReferences, type NameChanges } from './egg-names.js';
import { readDonePatterns, readStartup, readStop } from './egg-startup.js';
import { readVariables } from './egg-variables.js';

export { EGG_LIMITS } from './egg-fields.js';
export { normalizePlaceholders } from './egg-startup.js';
export { RESERVED_ENV_NAMES } from './egg-variables.js';

export interface ImportedEgg {
  readonly format: EggFormat;
  readonly uuid: string | null;
  readonly definition: TemplateDefinition;
  /** What the import noticed and does not enforce, one sentence each. */
  readonly warnings: string[];
}

/** The install image when an egg names none: each panel's own default. */
const DEFAULT_INSTALL_IMAGE: Readonly<Record<'PTDL' | 'PLCN', string>> = {
  PTDL: 'ghcr.io/pterodactyl/installers:alpine',
  PLCN: 'ghcr.io/pelican-eggs/installers:debian',
};
const DEFAULT_ENTRYPOINT = 'bash';

export function parseEgg(text: string): ImportedEgg {
  if (typeof text !== 'string') throw invalid('$', 'must be JSON or YAML text');
  if (text.length > EGG_LIMITS.document) {
    throw invalid('$', `is longer than ${EGG_LIMITS.document} characters`);
  }
  const egg = readDocument(text);
  const format = readFormat(egg);
  const warnings: string[] = [];
  const name = requiredText(own(egg, 'name'), 'name', EGG_LIMITS.name).trim();
  const author = optionalText(own(egg, 'author'), 'author', EGG_LIMITS.name).trim() || null;
  const description = optionalText(own(egg, 'description'), 'description', EGG_LIMITS.text);

  const { variables, renames } = readVariables(egg, warnings);
  const config = optionalRecord(own(egg, 'config'), 'config') ?? {};
  const features = readFeatures(egg);

  const definition: TemplateDefinition = {
    name,
    author,
    description,
    startupCommands: readStartup(egg, format, renames),
    stop: readStop(own(config, 'stop'), warnings),
    donePatterns: readDonePatterns(config, warnings),
    configFiles: readConfigFiles(config, renames, warnings),
    install: readInstall(egg, format, renames),
    variables,
    dockerImages: readImages(egg, format, warnings),
    features,
    fileDenylist: readDenylist(own(egg, 'file_denylist'), warnings),
    readsConsoleInput: !features.includes(NO_CONSOLE_INPUT),
  };
  readConfigLogs(config);
  noteIgnored(config, warnings);
  return { format, uuid: readUuid(own(egg, 'uuid')), definition, warnings };
}

/** JSON when it starts with `{` (YAML as a fallback: a flow mapping starts so too), else YAML. */
function readDocument(text: string): Json {
  const body = text.replace(/^\uFEFF/, '');
  let value: unknown;
  if (body.trimStart().startsWith('{')) {
    try {
      value = JSON.parse(body);
    } catch (jsonError) {
      try {
        value = readYaml(body);
      } catch {
        throw invalid('$', `is not valid JSON: ${errorText(jsonError)}`);
      }
    }
  } else {
    try {
      value = readYaml(body);
    } catch (yamlError) {
      throw invalid('$', `is not valid YAML: ${errorText(yamlError)}`);
    }
  }
  if (!isRecord(value)) throw invalid('$', 'must be a mapping (an egg object)');
  return value;
}

/** YAML 1.2 (core schema); every error is fatal, warnings (unknown tags…) are not. */
function readYaml(text: string): unknown {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const [error] = document.errors;
  if (error !== undefined) throw error;
  return document.toJS({ maxAliasCount: 100 });
}

function readFormat(egg: Json): EggFormat {
  const meta = own(egg, 'meta');
  const version = isRecord(meta) ? own(meta, 'version') : undefined;
  const supported = EGG_FORMATS.join(', ');
  if (version === undefined || version === null || version === '') {
    throw invalid('meta.version', `is missing; supported: ${supported}`);
  }
  const format = EGG_FORMATS.find((known) => known === version);
  if (format === undefined) {
    throw invalid('meta.version', `${describe(version)} is not supported; supported: ${supported}`);
  }
  return format;
}

function readUuid(value: unknown): string | null {
  const uuid = optionalText(value, 'uuid', EGG_LIMITS.name).trim();
  return uuid === '' ? null : uuid;
}

// --- install, images, features ------------------------------------------------------------------

function readInstall(egg: Json, format: EggFormat, renames: NameChanges): InstallScript | null {
  const scripts = optionalRecord(own(egg, 'scripts'), 'scripts');
  const installation =
    scripts === null ? null : optionalRecord(own(scripts, 'installation'), 'scripts.installation');
  if (installation === null) return null;
  const path = 'scripts.installation';
  const script = optionalText(own(installation, 'script'), `${path}.script`, EGG_LIMITS.script);
  if (script.trim() === '') return null;
  const image = optionalText(
    own(installation, 'container'),
    `${path}.container`,
    EGG_LIMITS.image,
  ).trim();
  if (image !== '') checkImage(image, `${path}.container`);
  const entrypoint = optionalText(
    own(installation, 'entrypoint'),
    `${path}.entrypoint`,
    255,
  ).trim();
  if (/[\s\0]/.test(entrypoint)) {
    throw invalid(`${path}.entrypoint`, 'must be a single program (bash, ash, sh)');
  }
  return {
    // Wings writes the script with Unix line endings; exported eggs carry Windows ones. A renamed
    // variable is in the environment under its new name: `$hostname` follows it.
    script: renameShellReferences(script.replace(/\r\n/g, '\n'), renames),
    image: image || DEFAULT_INSTALL_IMAGE[format.startsWith('PTDL') ? 'PTDL' : 'PLCN'],
    entrypoint: entrypoint || DEFAULT_ENTRYPOINT,
  };
}

/**
 * PTDL_v1: `images` (a list) or `image` (one); later: `docker_images`, display name → image, or
 * v1's `images` list when there is no `docker_images` (with a warning: one egg was exported so).
 * (In Pelican's formats `image` is the egg's icon, not a container image.)
 */
function readImages(
  egg: Json,
  format: EggFormat,
  warnings: string[],
): { name: string; image: string }[] {
  const images = own(egg, 'images');
  const image = own(egg, 'image');
  const docker = own(egg, 'docker_images');
  const none =
    docker === undefined ||
    docker === null ||
    (Array.isArray(docker) && docker.length === 0) ||
    (isRecord(docker) && Object.keys(docker).length === 0);
  // Pterodactyl would import such an egg with no image at all; the list is what was meant.
  const v1List = format !== 'PTDL_v1' && none && Array.isArray(images) && images.length > 0;
  if (v1List) {
    warnings.push(`images: ${format} names its images in docker_images; the images list is used`);
  }
  let read: { name: string; image: string; path: string }[];
  let path = 'docker_images';
  if (v1List || (format === 'PTDL_v1' && images !== undefined && images !== null)) {
    path = 'images';
    read = list(images, path).map((ref, i) => {
      const text = requiredText(ref, `${path}[${i}]`, EGG_LIMITS.image);
      return { name: text, image: text, path: `${path}[${i}]` };
    });
  } else if (format === 'PTDL_v1' && image !== undefined && image !== null) {
    path = 'image';
    const text = requiredText(image, path, EGG_LIMITS.image);
    read = [{ name: text, image: text, path }];
  } else {
    if (Array.isArray(docker)) {
      read = docker.map((ref, i) => {
        const text = requiredText(ref, `${path}[${i}]`, EGG_LIMITS.image);
        return { name: text, image: text, path: `${path}[${i}]` };
      });
    } else {
      read = Object.entries(record(docker ?? {}, path)).map(([name, ref]) => {
        const at = key(path, name);
        if (name.trim() === '' || name.length > EGG_LIMITS.name) {
          throw invalid(at, `the name must be 1 to ${EGG_LIMITS.name} characters`);
        }
        return { name, image: requiredText(ref, at, EGG_LIMITS.image), path: at };
      });
    }
  }
  if (read.length === 0) throw invalid(path, 'has no image');
  if (read.length > EGG_LIMITS.images) {
    throw invalid(path, `has more than ${EGG_LIMITS.images} images`);
  }
  return read.map(({ name, image: ref, path: at }) => {
    const trimmed = ref.trim();
    checkImage(trimmed, at);
    return { name, image: trimmed };
  });
}

/** An image reference: one word of printable characters (the runtime resolves it). */
function checkImage(image: string, path: string): void {
  if (image === '') throw invalid(path, 'the image reference is empty');
  if (/\s/.test(image) || CONTROL.test(image)) {
    throw invalid(path, `${describe(image)} is not an image reference`);
  }
}

function readFeatures(egg: Json): string[] {
  const features = list(own(egg, 'features'), 'features');
  if (features.length > EGG_LIMITS.features) {
    throw invalid('features', `has more than ${EGG_LIMITS.features} entries`);
  }
  return features.map((feature, i) => requiredText(feature, `features[${i}]`, EGG_LIMITS.name));
}

/** What eggs carry and this panel does not act on, when it is not empty. */
function noteIgnored(config: Json, warnings: string[]): void {
  const parent = own(config, 'extends');
  if (parent !== undefined && parent !== null && parent !== '') {
    warnings.push(
      'config.extends: inheriting from another egg is not supported; only this egg’s own config is used',
    );
  }
}

/** A short id from a name: `Minecraft: Java Edition` → `minecraft-java-edition`. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug === '' ? 'template' : slug;
}
