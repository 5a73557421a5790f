import type { NewServer } from '../../hooks/useServers';

/** The create form's fields, as typed. */
export interface NewServerForm {
  readonly name: string;
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string;
}

export const EMPTY_FORM: NewServerForm = {
  name: '',
  displayName: '',
  startCommand: '',
  stopCommand: '',
};

/** The request a filled-in form stands for: optional fields left empty are not sent. */
export function newServerFrom(form: NewServerForm): NewServer {
  const displayName = form.displayName.trim();
  const stopCommand = form.stopCommand.trim();
  return {
    name: form.name.trim(),
    startCommand: form.startCommand.trim(),
    ...(displayName === '' ? {} : { displayName }),
    ...(stopCommand === '' ? {} : { stopCommand }),
  };
}
