/**
 * Container image references as the Docker engine reads them (distribution's grammar): which
 * registry an image comes from, and what a pull asks that registry for. Pure: no engine, no
 * network.
 */

/** Docker Hub, as its images name it (`debian:12`, `pterodactyl/yolks:java_21`). */
export const DOCKER_HUB = 'docker.io';

/** Other names of Docker Hub, all stored and compared as `docker.io`. */
const HUB_ALIASES = new Set(['index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

export interface ImageReference {
  /** The registry's host and port, lower-case: `docker.io` for Docker Hub's images. */
  readonly registry: string;
  /** The repository as the image names it (registry included when it names one), no tag. */
  readonly repository: string;
  /** The repository at its registry, without the registry: `game-panel/minetest`, `debian`. */
  readonly path: string;
  /** The tag, or the `sha256:…` digest; `latest` when the reference names neither. */
  readonly version: string;
}

/**
 * Whether the first part of a reference names a registry: it holds a dot or a port, or is
 * `localhost`; otherwise the image is Docker Hub's (`games/minetest` is Hub's `games`).
 */
const namesRegistry = (part: string): boolean =>
  part.includes('.') || part.includes(':') || part === 'localhost';

/** The registry a host names, as the panel keeps it: lower-case, Docker Hub's aliases as one. */
export function registryHost(host: string): string {
  const lower = host.toLowerCase();
  return HUB_ALIASES.has(lower) ? DOCKER_HUB : lower;
}

/** Where `image` comes from and what a pull of it asks for. */
export function parseImage(image: string): ImageReference {
  const at = image.indexOf('@');
  const named = at === -1 ? image : image.slice(0, at);
  const digest = at === -1 ? null : image.slice(at + 1);
  const slash = named.indexOf('/');
  const first = slash === -1 ? '' : named.slice(0, slash);
  const hostNamed = slash !== -1 && namesRegistry(first);
  const registry = hostNamed ? registryHost(first) : DOCKER_HUB;
  // A tag follows the last colon after the last slash (a colon before it is the host's port).
  const colon = named.lastIndexOf(':');
  const tagged = colon > named.lastIndexOf('/');
  const repository = tagged ? named.slice(0, colon) : named;
  const tag = tagged ? named.slice(colon + 1) : null;
  const path = hostNamed ? repository.slice(slash + 1) : repository;
  return { registry, repository, path, version: digest ?? tag ?? 'latest' };
}

/** The registry `image` comes from. */
export const registryOf = (image: string): string => parseImage(image).registry;

/**
 * Why `image` is never pulled, whatever the settings, or null: the panel's shipped templates name
 * images to build on the host (`game-panel/minetest:5`), which would otherwise be asked of Docker
 * Hub, where anybody may publish under that name.
 */
export function neverPulled(image: string): string | null {
  const { registry, path } = parseImage(image);
  if (registry !== DOCKER_HUB || !path.startsWith('game-panel/')) return null;
  return `${image} is an image of the panel's own templates, built on the Docker host (docs/runtimes.md, "Making an image"), never pulled: build or load it there`;
}

/**
 * A registry host as an admin may list it: a host name or IPv4 address (a dot, a port or
 * `localhost`, so that an image can name it), an optional port; lower-case.
 */
export const REGISTRY_HOST_PATTERN =
  '^(?:localhost|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)(?::[0-9]{1,5})?$';

const REGISTRY_HOST = new RegExp(REGISTRY_HOST_PATTERN);

/** Why `host` cannot be a registry's host, or null. */
export function registryHostProblem(host: string): string | null {
  if (!REGISTRY_HOST.test(host)) {
    return 'must be a lower-case host name or IPv4 address with an optional port, e.g. ghcr.io or 127.0.0.1:5000';
  }
  const [name = '', port] = host.split(':');
  if (!namesRegistry(host)) {
    return `an image cannot name ${name} as its registry (it would be Docker Hub's ${name}/…): give its port or full name, or docker.io for Docker Hub`;
  }
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) {
    return 'its port must be between 1 and 65535';
  }
  if (HUB_ALIASES.has(host)) return 'Docker Hub is listed as docker.io';
  return null;
}
