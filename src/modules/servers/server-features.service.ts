/**
 * What a server's egg features let its users do (docs/templates.md, "What eggs' features
 * promise"): accept the Minecraft EULA (`eula`), and choose among the template's container images
 * (`java_version`, and any template with several images). The console tells them when: the host
 * raises a notice when the game prints the line (src/domain/features.ts).
 *
 * Rights: accepting the EULA writes a file and starts the server, so it needs `files.write` and
 * `power`, as the two requests Pterodactyl's front end makes for it. Choosing an image needs
 * `settings`, and only among the template's images; an image an admin set outside them stays
 * the admin's to change (`PUT …/config`, which takes any image).
 */
import { hasFeature, MINECRAFT_EULA_URL } from '../../domain/features.js';
import { can } from '../../domain/policy.js';
import type { RuntimeKind, ServerRecord, ServerStatus } from '../../domain/server.js';
import type { Template } from '../../domain/template.js';
import type { User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type { ServersRepository } from './servers.repository.js';
import type { ServersService, TemplateLookup } from './servers.service.js';

/** The file Minecraft reads the acceptance from, in the server's folder. */
export const EULA_FILE = 'eula.txt';

/** A server's image and the images its template offers, as its settings show them. */
export interface ImageChoice {
  readonly runtime: RuntimeKind;
  readonly image: string | null;
  /** The template's images, by display name, its default first; empty without a template. */
  readonly images: readonly { readonly name: string; readonly image: string }[];
  /** Whether the caller may choose one now (`PUT …/image`). */
  readonly choosable: boolean;
  /** Why not, in words; null when they may. */
  readonly reason: string | null;
}

/** What a ServerFeaturesService is made from. */
export interface ServerFeaturesServiceDeps {
  readonly servers: ServersService;
  readonly repository: Pick<ServersRepository, 'update'>;
  readonly templates: TemplateLookup;
  readonly now: () => Date;
}

export class ServerFeaturesService {
  readonly #deps: ServerFeaturesServiceDeps;

  constructor(deps: ServerFeaturesServiceDeps) {
    this.#deps = deps;
  }

  /**
   * The caller accepts the Minecraft EULA for the server: `eula.txt` is written with
   * `eula=true`, then a stopped or crashed server is started (the answer is its status; a start
   * refused is the answer, and the file stays written). 409 when its template has no `eula`.
   */
  async acceptEula(user: User, name: string): Promise<ServerStatus> {
    const record = await this.#deps.servers.require(user, name, [
      'server.files.write',
      'server.power',
    ]);
    const template = await this.#templateOf(record);
    if (!hasFeature(template, 'eula')) {
      throw new AppError('CONFLICT', "The server's template does not ask for the Minecraft EULA");
    }
    const { files } = await this.#deps.servers.files(user, name, 'server.files.write');
    const content =
      `#By changing the setting below to TRUE you are indicating your agreement to the EULA (${MINECRAFT_EULA_URL}).\n` +
      `#Accepted through the panel on ${this.#deps.now().toISOString()}\n` +
      'eula=true\n';
    await files.writeText(name, [EULA_FILE], content, record.limits.diskBytes);
    const status = this.#deps.servers.status(name);
    if (status !== 'stopped' && status !== 'crashed') return status;
    return this.#deps.servers.start(user, name);
  }

  /** The server's image and its template's images, for a caller with `settings`. */
  async imageChoice(user: User, name: string): Promise<ImageChoice> {
    const record = await this.#deps.servers.require(user, name, 'server.settings');
    return this.#choice(user, record, await this.#templateOf(record));
  }

  /**
   * Sets the server's image to one of its template's (`settings`); it takes effect at the next
   * start. 400 for any other image, 409 for a server without a template or that runs as a
   * process, 403 when an admin set an image outside the template's list and the caller is not
   * one.
   */
  async chooseImage(user: User, name: string, image: string): Promise<ImageChoice> {
    const record = await this.#deps.servers.require(user, name, 'server.settings');
    const template = await this.#templateOf(record);
    const refusal = this.#refusal(user, record, template);
    if (refusal !== null) throw refusal;
    const images = template?.dockerImages ?? [];
    if (!images.some((choice) => choice.image === image)) {
      const message = `not one of the template's images (${images.map((choice) => choice.image).join(', ')})`;
      throw new AppError('VALIDATION_FAILED', `image: ${message}`, {
        details: [{ path: 'body/image', message }],
      });
    }
    if (image !== record.image) await this.#deps.repository.update(name, { image });
    return this.#choice(user, { ...record, image }, template);
  }

  #choice(user: User, record: ServerRecord, template: Template | null): ImageChoice {
    const refusal = this.#refusal(user, record, template);
    return {
      runtime: record.runtime,
      image: record.image,
      images: template?.dockerImages ?? [],
      choosable: refusal === null,
      reason: refusal?.message ?? null,
    };
  }

  /** Why the caller may not choose the server's image among its template's, or null. */
  #refusal(user: User, record: ServerRecord, template: Template | null): AppError | null {
    if (template === null || template.dockerImages.length === 0) {
      return new AppError(
        'CONFLICT',
        'The server was not made from a template with images: only an admin sets its image',
      );
    }
    if (record.runtime !== 'docker') {
      return new AppError(
        'CONFLICT',
        'The server runs as a process on the host, not in a container: it has no image to choose',
      );
    }
    const admin = can(user, 'server.configure-host', { permissions: null, server: record.name });
    const listed = template.dockerImages.some((choice) => choice.image === record.image);
    if (!listed && !admin) {
      return new AppError(
        'FORBIDDEN',
        `An admin set this server's image (${record.image ?? 'none'}), which its template does not offer: only an admin may change it`,
      );
    }
    return null;
  }

  async #templateOf(record: ServerRecord): Promise<Template | null> {
    if (record.template === null) return null;
    return (await this.#deps.templates.find(record.template)) ?? null;
  }
}
