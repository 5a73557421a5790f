/**
 * Container registries (admins only; the routes check the role): the credentials pulls use, and
 * whether images may come only from the listed registries (docs/templates.md, "Images"). It is
 * also the host's RegistryPolicy: what a pull may do, asked at each pull, and what a server's
 * image may be, asked when an admin sets it.
 *
 * A password is sealed with a key of its own (derived from the JWT secret), answered never, and
 * opened only to be handed to the engine with a pull.
 */
import { registryHostProblem, registryHost, registryOf } from '../../domain/image.js';
import type { Registry, RegistrySettings } from '../../domain/registry.js';
import { AppError, notFound } from '../../errors.js';
import type { RegistryAuth } from '../../domain/registry.js';
import type { RegistryPolicy } from '../../host/host.js';
import type { Logger } from '../../log.js';
import type { SecretBox } from '../two-factor/secret-box.js';
import type {
  RegistriesRepository,
  StoredCredentials,
  StoredRegistry,
} from './registries.repository.js';

export interface NewRegistry {
  readonly host: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
}

/** `null` for either removes the credentials; a username or password alone keeps the other. */
export interface RegistryChanges {
  readonly username?: string | null | undefined;
  readonly password?: string | null | undefined;
}

const view = (stored: StoredRegistry): Registry => ({
  host: stored.host,
  username: stored.username,
  passwordSet: stored.passwordSet,
  createdAt: stored.createdAt,
  updatedAt: stored.updatedAt,
});

export class RegistriesService implements RegistryPolicy {
  readonly #repo: RegistriesRepository;
  readonly #box: SecretBox;
  readonly #now: () => Date;
  readonly #log: Logger;

  constructor(deps: { repo: RegistriesRepository; box: SecretBox; now: () => Date; log: Logger }) {
    this.#repo = deps.repo;
    this.#box = deps.box;
    this.#now = deps.now;
    this.#log = deps.log;
  }

  async settings(): Promise<RegistrySettings> {
    const [restricted, registries] = await Promise.all([
      this.#repo.restricted(),
      this.#repo.list(),
    ]);
    return { restricted, registries: registries.map(view) };
  }

  /** Only the listed registries (true), or any (false). */
  async setRestricted(restricted: boolean): Promise<RegistrySettings> {
    await this.#repo.setRestricted(restricted);
    return this.settings();
  }

  /** 400 for a host no image can name or credentials half given; 409 when it is listed. */
  async add(input: NewRegistry): Promise<Registry> {
    const host = checkedHost(input.host, 'body/host');
    const credentials = this.#credentials(input.username ?? null, input.password ?? null);
    const added = await this.#repo.insert(host, credentials, this.#now().toISOString());
    if (!added) throw new AppError('ALREADY_EXISTS', `The registry ${host} is listed already`);
    return view(added);
  }

  async update(hostGiven: string, changes: RegistryChanges): Promise<Registry> {
    const host = registryHost(hostGiven);
    const current = await this.#repo.find(host);
    if (!current) throw notFound('Registry');
    const removing = changes.username === null || changes.password === null;
    let credentials: StoredCredentials = null;
    if (!removing) {
      const username = changes.username ?? current.username;
      const sealed =
        changes.password === undefined ? current.sealedPassword : this.#box.seal(changes.password);
      if (username === null) throw needs('username', 'a password needs a username');
      if (sealed === null) throw needs('password', 'a username needs a password');
      checkUsername(username);
      credentials = { username, sealedPassword: sealed };
    } else if (typeof changes.username === 'string' || typeof changes.password === 'string') {
      throw needs(
        changes.username === null ? 'password' : 'username',
        'null removes both the username and the password: send it alone',
      );
    }
    const updated = await this.#repo.setCredentials(host, credentials, this.#now().toISOString());
    if (!updated) throw notFound('Registry');
    return view(updated);
  }

  async remove(hostGiven: string): Promise<void> {
    if (!(await this.#repo.delete(registryHost(hostGiven)))) throw notFound('Registry');
  }

  async refusal(image: string): Promise<string | null> {
    if (!(await this.#repo.restricted())) return null;
    const registry = registryOf(image);
    if (await this.#repo.find(registry)) return null;
    return `${image} comes from ${registry}, which is not among the registries images may be pulled from (an admin lists it in Settings, Registries)`;
  }

  async credentials(image: string): Promise<RegistryAuth | null> {
    const registry = registryOf(image);
    const stored = await this.#repo.find(registry);
    const username = stored?.username ?? null;
    const sealed = stored?.sealedPassword ?? null;
    if (username === null || sealed === null) return null;
    const password = this.#box.open(sealed);
    if (password === null) {
      this.#log.warn(
        { registry },
        'the password stored for a registry cannot be read (JWT_SECRET changed?): pulling without it; set it again',
      );
      return null;
    }
    return { registry, username, password };
  }

  /** Both or neither, checked; the password sealed. */
  #credentials(username: string | null, password: string | null): StoredCredentials {
    if (username === null && password === null) return null;
    if (username === null) throw needs('username', 'a password needs a username');
    if (password === null) throw needs('password', 'a username needs a password');
    checkUsername(username);
    return { username, sealedPassword: this.#box.seal(password) };
  }
}

/** A host as it is kept (lower-case, Docker Hub's aliases as docker.io); 400 naming `path`. */
function checkedHost(given: string, path: string): string {
  const host = registryHost(given);
  const problem = registryHostProblem(host);
  if (problem !== null) {
    throw new AppError('VALIDATION_FAILED', `host: ${problem}`, {
      details: [{ path, message: problem }],
    });
  }
  return host;
}

/** Basic authentication cannot carry a colon in the username, nor any line break. */
function checkUsername(username: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[:\u0000-\u001f\u007f]/.test(username)) {
    throw needs('username', 'must not hold a colon or a control character');
  }
}

const needs = (field: 'username' | 'password', message: string): AppError =>
  new AppError('VALIDATION_FAILED', `${field}: ${message}`, {
    details: [{ path: `body/${field}`, message }],
  });
