/**
 * The start-up log's last line, for the person who just started the panel: where to open it and,
 * while no account exists, how the first one (the admin) is made.
 */
import type { Config } from './config.js';

/**
 * `listeningAt`: the address the panel listens on, as Fastify's `listen` answers it
 * (`http://127.0.0.1:8000`), which knows the port PORT=0 was given. `accountsExist`: whether any
 * account was ever made.
 */
export function openLine(config: Config, listeningAt: string, accountsExist: boolean): string {
  const where = `Open ${whereToOpen(config, listeningAt)}`;
  if (accountsExist) return `${where} to use the panel.`;
  if (config.registration === 'closed') {
    return `${where}: no account exists yet and REGISTRATION=closed, so make the admin with: npm run cli -- user create <name> --admin`;
  }
  return `${where} and create the first account: it becomes the panel's admin.`;
}

function whereToOpen(config: Config, listeningAt: string): string {
  // PUBLIC_URL unset is the listening address as configured; set, it is where people come in.
  if (config.publicUrl !== configuredAddress(config)) return `${config.publicUrl}/`;
  if (config.host === '0.0.0.0' || config.host === '::') {
    const port = URL.canParse(listeningAt) ? new URL(listeningAt).port : String(config.port);
    return `http://<this machine's address>:${port}/ (set PUBLIC_URL to the address people use)`;
  }
  return `${listeningAt.replace(/\/+$/, '')}/`;
}

function configuredAddress(config: Config): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}
