/** Every command of the command line, in the order `help` lists them. */
import type { CliCommand } from './command.js';
import { serviceCommand } from './service.js';
import { setupCommand } from './setup.js';
import { shutdownCommand } from './shutdown-command.js';
import { userCommand } from './user-command.js';

export const COMMANDS: readonly CliCommand[] = [
  setupCommand,
  serviceCommand,
  userCommand,
  shutdownCommand,
];
