/**
 * The panel's settings (docs/security.md, "Defaults that bound a tenant" and "Registration"):
 * admins read and change them through the routes; the servers, backups and auth services read
 * the current values through the functions handed to them in app.ts.
 */
import type { RegistrationMode } from '../../config.js';
import type {
  DefaultBackupLimits,
  DefaultLimits,
  PanelSettings,
} from '../../domain/panel-settings.js';
import { definedFields } from '../../fields.js';
import type { SettingsRepository } from './settings.repository.js';

export interface SettingsView extends PanelSettings {
  readonly registrationEnv: RegistrationMode | null;
}

export interface SettingsChanges {
  readonly serverDefaults?: Partial<DefaultLimits> | undefined;
  readonly backupDefaults?: Partial<DefaultBackupLimits> | undefined;
  readonly registrationOpen?: boolean | undefined;
}

export class SettingsService {
  readonly #repo: SettingsRepository;
  readonly #registrationEnv: RegistrationMode | null;

  constructor(deps: { repo: SettingsRepository; registrationEnv: RegistrationMode | null }) {
    this.#repo = deps.repo;
    this.#registrationEnv = deps.registrationEnv;
  }

  async get(): Promise<SettingsView> {
    return { ...(await this.#repo.read()), registrationEnv: this.#registrationEnv };
  }

  /** Changes what is sent; what is left out stays as it is. */
  async save(changes: SettingsChanges): Promise<SettingsView> {
    const current = await this.#repo.read();
    const updated: PanelSettings = {
      serverDefaults: { ...current.serverDefaults, ...definedFields(changes.serverDefaults) },
      backupDefaults: { ...current.backupDefaults, ...definedFields(changes.backupDefaults) },
      registrationOpen: changes.registrationOpen ?? current.registrationOpen,
    };
    await this.#repo.write(updated);
    return { ...updated, registrationEnv: this.#registrationEnv };
  }

  async serverDefaults(): Promise<DefaultLimits> {
    return (await this.#repo.read()).serverDefaults;
  }

  async backupDefaults(): Promise<DefaultBackupLimits> {
    return (await this.#repo.read()).backupDefaults;
  }

  /** Whether registration is open after the first account, REGISTRATION and the setting combined. */
  async registrationOpenAfterFirst(): Promise<boolean> {
    if (this.#registrationEnv !== null) return this.#registrationEnv === 'open';
    return (await this.#repo.read()).registrationOpen;
  }
}
