/**
 * Server templates: imported from Pterodactyl and Pelican eggs (src/templates/egg.ts), listed
 * and read by anyone signed in (without the variables a user may not see), imported and deleted
 * by admins. The panel's own templates (src/templates/shipped.ts) are imported when it starts
 * with none at all.
 */
import { AlreadyExists, NoLongerExists } from '../../domain/conflicts.js';
import { can } from '../../domain/policy.js';
import type { Template } from '../../domain/template.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { Logger } from '../../log.js';
import { parseEgg, slugify } from '../../templates/egg.js';
import { SHIPPED_EGGS } from '../../templates/shipped.js';
import { needsPort } from '../../templates/template-uses.js';
import type { TemplatesRepository } from './templates.repository.js';

/** Which servers were made from a template (the servers domain keeps them). */
export interface TemplateUsers {
  usesTemplate(id: string): Promise<string[]>;
}

export interface TemplateSummary {
  readonly id: string;
  readonly name: string;
  readonly author: string | null;
  readonly description: string;
  readonly format: Template['format'];
  readonly hasInstallScript: boolean;
  readonly createdAt: string;
}

/** What a TemplatesService is made from. */
export interface TemplatesServiceDeps {
  readonly templates: TemplatesRepository;
  readonly servers: TemplateUsers;
  readonly now: () => Date;
  readonly log: Logger;
}

export class TemplatesService {
  readonly #deps: TemplatesServiceDeps;

  constructor(deps: TemplatesServiceDeps) {
    this.#deps = deps;
  }

  async list(): Promise<TemplateSummary[]> {
    return (await this.#deps.templates.list()).map((template) => ({
      id: template.id,
      name: template.name,
      author: template.author,
      description: template.description,
      format: template.format,
      hasInstallScript: template.install !== null,
      createdAt: template.createdAt,
    }));
  }

  /**
   * The template, with whether a server from it needs a port; for anyone but an admin, without
   * the variables users may not see.
   */
  async get(user: User, id: string): Promise<Template & { needsPort: boolean }> {
    const template = await this.require(id);
    const shown = { ...template, needsPort: needsPort(template) };
    if (can(user, 'templates.manage')) return shown;
    return { ...shown, variables: template.variables.filter((v) => v.userViewable) };
  }

  find(id: string): Promise<Template | undefined> {
    return this.#deps.templates.find(id);
  }

  async require(id: string): Promise<Template> {
    const template = await this.#deps.templates.find(id);
    if (!template) throw notFound('Template');
    return template;
  }

  /** Imports an egg (JSON or YAML text); 400 naming the field that is wrong, 409 if imported. */
  async import(text: string): Promise<Template & { needsPort: boolean }> {
    const egg = parseEgg(text);
    if (egg.uuid !== null) {
      const existing = await this.#deps.templates.findByUuid(egg.uuid);
      if (existing) {
        throw new AppError(
          'ALREADY_EXISTS',
          `This egg is imported already, as template "${existing.id}"; delete that one to import it again`,
        );
      }
    }
    const taken = new Set(await this.#deps.templates.ids());
    const base = slugify(egg.definition.name);
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
    const template: Template = {
      ...egg.definition,
      id,
      uuid: egg.uuid,
      format: egg.format,
      warnings: egg.warnings,
      createdAt: this.#deps.now().toISOString(),
    };
    try {
      await this.#deps.templates.insert(template);
    } catch (error) {
      if (error instanceof AlreadyExists) {
        throw new AppError('CONFLICT', 'The same egg was imported at the same time; try again');
      }
      throw error;
    }
    return { ...template, needsPort: needsPort(template) };
  }

  /** Deletes a template no server uses (409 naming them otherwise). */
  async remove(id: string): Promise<void> {
    await this.require(id);
    const users = await this.#deps.servers.usesTemplate(id);
    if (users.length > 0) throw inUse(users);
    try {
      if (!(await this.#deps.templates.delete(id))) throw notFound('Template');
    } catch (error) {
      // A server was made from it meanwhile.
      if (error instanceof NoLongerExists) throw inUse(await this.#deps.servers.usesTemplate(id));
      throw error;
    }
  }

  /** At start: the panel's own templates, when there are no templates at all. */
  async importShipped(): Promise<void> {
    if ((await this.#deps.templates.ids()).length > 0) return;
    for (const egg of SHIPPED_EGGS) {
      try {
        await this.import(JSON.stringify(egg));
      } catch (error) {
        this.#deps.log.error({ err: error }, 'could not import a template shipped with the panel');
      }
    }
  }
}

const inUse = (servers: readonly string[]): AppError =>
  new AppError(
    'CONFLICT',
    `The template is used by ${servers.length === 1 ? 'server' : 'servers'} ${servers.join(', ')}: delete ${servers.length === 1 ? 'it' : 'them'} first`,
  );
