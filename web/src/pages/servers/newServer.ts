import type { NewServer } from '../../hooks/useServers';

/** The create form's fields, as typed. */
export interface NewServerForm {
  readonly name: string;
  readonly displayName: string;
  /** A template's id, or '' for none (then the start command is required). */
  readonly template: string;
  /** The template's variables by environment name, prefilled with their defaults. */
  readonly variables: Readonly<Record<string, string>>;
  readonly startCommand: string;
  readonly stopCommand: string;
  /** The primary port (on every address), or '' for none. */
  readonly port: string;
}

export const EMPTY_FORM: NewServerForm = {
  name: '',
  displayName: '',
  template: '',
  variables: {},
  startCommand: '',
  stopCommand: '',
  port: '',
};

/**
 * The request a filled-in form stands for: optional fields left empty are not sent. With a
 * template, the commands come from it and its variables are sent as they are (the API checks
 * them against their rules); without one, the start command is sent and variables are not.
 * A port that is not a whole number is sent as typed, for the API to refuse with its message.
 */
export function newServerFrom(form: NewServerForm): NewServer {
  const displayName = form.displayName.trim();
  const stopCommand = form.stopCommand.trim();
  const port = form.port.trim();
  const common = {
    name: form.name.trim(),
    ...(displayName === '' ? {} : { displayName }),
    ...(port === '' ? {} : { allocations: [{ ip: '0.0.0.0', port: Number(port) }] }),
  };
  if (form.template !== '') {
    return { ...common, template: form.template, variables: { ...form.variables } };
  }
  return {
    ...common,
    startCommand: form.startCommand.trim(),
    ...(stopCommand === '' ? {} : { stopCommand }),
  };
}
