/**
 * What an egg's `features` promise (docs/templates.md, "What eggs' features promise"): the lines
 * of a game's output each one watches for, as Pterodactyl's front end watches them
 * (`resources/scripts/components/server/features`), and what the panel says when one shows up.
 * Pure: no I/O. The supervisor watches the output (src/host/local/feature-watch.ts).
 *
 * The lines are the panel's own constants, matched as plain text ignoring case, never a user's or
 * an egg's pattern: a line costs time linear in its length.
 */
import type { ServerRecord } from './server.js';
import type { TemplateDefinition } from './template.js';

/** The features the panel acts on; an egg may name others, which are kept and unused. */
export type Feature = 'eula' | 'java_version' | 'pid_limit' | 'steam_disk_space';

export const FEATURES: readonly Feature[] = [
  'eula',
  'java_version',
  'pid_limit',
  'steam_disk_space',
];

/** A feature's line showed up in the server's output: what it means and what to do. */
export interface FeatureNotice {
  readonly feature: Feature;
  /** The panel's words, also written to the console as a `[panel] …` line. */
  readonly message: string;
}

/** Where Minecraft's EULA is (the link its own eula.txt gives). */
export const MINECRAFT_EULA_URL = 'https://aka.ms/MinecraftEULA';

/**
 * The lines each feature watches for, lower case: a line of output containing one (ignoring case)
 * raises the feature's notice. Pterodactyl's lists, plus Paper's and Spigot's "Unsupported Java
 * detected" and the general form of Minecraft's own Java check (1.17, 1.18, 1.20.5…).
 */
export const FEATURE_LINES: Readonly<Record<Feature, readonly string[]>> = {
  eula: ['you need to agree to the eula in order to run the server'],
  java_version: [
    'requires running the server with java',
    'java.lang.unsupportedclassversionerror',
    'unsupported major.minor version',
    'has been compiled by a more recent version of the java runtime',
    'unsupported java detected',
  ],
  pid_limit: [
    'pthread_create failed',
    'failed to create thread',
    'unable to create thread',
    'unable to create native thread',
    'unable to create new native thread',
    'exception in thread "craft async scheduler management thread"',
  ],
  steam_disk_space: ['steamcmd needs 250mb of free disk space to update', '0x202 after update job'],
};

/** The features of a template the panel acts on, each once (the egg's names compared ignoring case). */
export function featuresOf(template: Pick<TemplateDefinition, 'features'> | null): Feature[] {
  if (template === null) return [];
  const named = new Set(template.features.map((feature) => feature.toLowerCase()));
  return FEATURES.filter((feature) => named.has(feature));
}

/** Whether the template promises `feature`. */
export const hasFeature = (
  template: Pick<TemplateDefinition, 'features'> | null,
  feature: Feature,
): boolean => featuresOf(template).includes(feature);

/**
 * The feature whose line `line` contains, among `watched`, or null. `line` is the server's own
 * output (never a line of the panel's, which may repeat what somebody typed).
 */
export function featureOfLine(line: string, watched: readonly Feature[]): Feature | null {
  if (watched.length === 0) return null;
  const lower = line.toLowerCase();
  for (const feature of watched) {
    if (FEATURE_LINES[feature].some((text) => lower.includes(text))) return feature;
  }
  return null;
}

/** The server as the notices describe it: how it runs and with how much. */
export type NoticeSubject = Pick<ServerRecord, 'name' | 'runtime' | 'image' | 'limits'>;

/**
 * What the panel says when `feature`'s line shows up in the output of `server`, made from
 * `template`: what it means and what to do, in words for the people who read the console.
 */
export function noticeOf(
  feature: Feature,
  server: NoticeSubject,
  template: Pick<TemplateDefinition, 'dockerImages'> | null,
): FeatureNotice {
  return { feature, message: explain(feature, server, template) };
}

function explain(
  feature: Feature,
  server: NoticeSubject,
  template: Pick<TemplateDefinition, 'dockerImages'> | null,
): string {
  switch (feature) {
    case 'eula':
      return `the game runs only once the Minecraft EULA (${MINECRAFT_EULA_URL}) is accepted: accept it on the server's Console tab (it needs the files.write and power permissions), which writes eula=true into eula.txt and starts the server`;
    case 'java_version':
      return javaMessage(server, template);
    case 'pid_limit': {
      const pids = server.limits.pids;
      return pids === null
        ? 'the game could not start a new thread: the host refused it (its process or memory limits). An admin should look at the host; the server has no process limit of its own'
        : `the game could not start a new thread: the server reached its process limit (${pids} processes and threads) or its memory ran out. An admin may raise its process limit (or its memory limit) in Settings, then restart it`;
    }
    case 'steam_disk_space':
      return "SteamCMD could not install or update the game: it needs 250 MB free on the disk that holds the server's folder. Delete files the server no longer needs, or an admin frees space on the host's disk, then try again";
  }
}

/** The java_version notice: the images the server may run instead, and who may choose them. */
function javaMessage(
  server: NoticeSubject,
  template: Pick<TemplateDefinition, 'dockerImages'> | null,
): string {
  const start = 'the game needs another Java version than the one it ran with';
  if (server.runtime === 'process') {
    return `${start}: it runs with the host's Java (process runtime), so an admin installs the Java it needs on the host, or runs it with Docker and an image that has it`;
  }
  const images = template?.dockerImages ?? [];
  const current = server.image ?? '';
  if (!images.some((choice) => choice.image === current)) {
    return `${start} (its image ${current}, set by an admin, is not one its template offers): only an admin may change it, in Settings`;
  }
  const others = images.filter((choice) => choice.image !== current);
  if (others.length === 0) {
    return `${start} (its image is ${current}, the only one its template offers): an admin may set another image in Settings`;
  }
  const listed = others
    .map((choice) =>
      choice.name === choice.image ? choice.image : `${choice.name} (${choice.image})`,
    )
    .join(', ');
  return `${start} (its image is ${current}). Someone with the settings permission may choose another of its template's images on the Settings tab: ${listed}; it takes effect at the next start`;
}
