/**
 * Container registries an admin lists (docs/templates.md, "Images"): where images may be pulled
 * from when the panel restricts it, and the credentials pulls from each use. A password is
 * stored sealed and never shown again, in any answer or log.
 */

/** A listed registry, as an admin sees it. */
export interface Registry {
  /** As images name it, lower-case: `ghcr.io`, `127.0.0.1:5000`, `docker.io` for Docker Hub. */
  readonly host: string;
  /** Who pulls sign in as; null: pulled anonymously. */
  readonly username: string | null;
  /** A password is stored (it is never shown again). */
  readonly passwordSet: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The registries and the panel's rule for them. */
export interface RegistrySettings {
  /** Images may be pulled only from the listed registries (false: from any). */
  readonly restricted: boolean;
  /** By host. */
  readonly registries: readonly Registry[];
}

/** A registry's credentials, sent to the engine with a pull; never logged, never shown. */
export interface RegistryAuth {
  /** The registry's host (and port), as images name it; `docker.io` for Docker Hub. */
  readonly registry: string;
  readonly username: string;
  readonly password: string;
}
