import type { Node } from '../../hooks/useNodes';
import type { NewServer } from '../../hooks/useServers';
import { formatBytes } from '../server/format';
import {
  limitValuesFrom,
  type LimitErrors,
  type LimitsForm,
} from '../server/settings/settingsForm';

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
  /**
   * The limits as typed (the Settings tab's fields), prefilled from the panel's defaults; null
   * while those are not in (then none is sent and the API gives the defaults).
   */
  readonly limits: LimitsForm | null;
  /** The node to put it on, or '' for automatic (the panel picks, docs/nodes.md "Placement"). */
  readonly node: string;
}

export const EMPTY_FORM: NewServerForm = {
  name: '',
  displayName: '',
  template: '',
  variables: {},
  startCommand: '',
  stopCommand: '',
  port: '',
  limits: null,
  node: '',
};

/** Said when the process limit is emptied: the API would put the default back. */
export const PIDS_REQUIRED = 'Enter a number: every server has a process limit';

/**
 * The request a filled-in form stands for, or what is wrong with its limits. Optional fields
 * left empty are not sent. With a template, the commands come from it and its variables are sent
 * as they are (the API checks them against their rules); without one, the start command is sent
 * and variables are not. A port that is not a whole number is sent as typed, for the API to
 * refuse with its message. The limits are sent all four, converted from their units; an empty
 * memory, CPU or disk limit is `null` (none), an empty process limit is refused here (every
 * server has one: the API would give it the default), a text that is no number too. Whether a
 * number is in range is the API's to say, next to the field as on the Settings tab.
 */
export function newServerFrom(
  form: NewServerForm,
): { server: NewServer } | { errors: LimitErrors } {
  const displayName = form.displayName.trim();
  const stopCommand = form.stopCommand.trim();
  const port = form.port.trim();
  let limits: NewServer['limits'];
  if (form.limits !== null) {
    const { values, errors } = limitValuesFrom(form.limits);
    if (values.pids === null) errors.pids = PIDS_REQUIRED;
    if (Object.keys(errors).length > 0) return { errors };
    limits = values;
  }
  const common = {
    name: form.name.trim(),
    ...(displayName === '' ? {} : { displayName }),
    ...(port === '' ? {} : { allocations: [{ ip: '0.0.0.0', port: Number(port) }] }),
    ...(limits === undefined ? {} : { limits }),
    ...(form.node === '' ? {} : { node: form.node }),
  };
  if (form.template !== '') {
    return { server: { ...common, template: form.template, variables: { ...form.variables } } };
  }
  return {
    server: {
      ...common,
      startCommand: form.startCommand.trim(),
      ...(stopCommand === '' ? {} : { stopCommand }),
    },
  };
}

/**
 * What is wrong with the port as typed, when a template needs one (its start-up or config files
 * use it) and it is empty: said next to the field, with the next free port when it is known.
 */
export function portProblem(
  port: string,
  required: boolean,
  offered: number | undefined,
): string | undefined {
  if (!required || port.trim() !== '') return undefined;
  return `Enter a port: the template's start-up uses one${offered === undefined ? '' : ` (${offered} is free)`}`;
}

/**
 * How a node is offered in the create form's node choice: its name, and why it would not take a
 * server (maintenance, unreachable) or the memory it has left, in words.
 */
export function nodeOptionLabel(
  node: Pick<Node, 'name' | 'maintenance' | 'health' | 'allocated'>,
): string {
  if (node.maintenance) return `${node.name}: in maintenance, takes no server`;
  if (node.health.status === 'unreachable') return `${node.name}: unreachable`;
  const capacity = node.allocated.memoryCapacityBytes;
  const left =
    capacity === null
      ? 'memory not counted'
      : `${formatBytes(Math.max(0, capacity - node.allocated.memoryBytes))} of memory left`;
  return `${node.name}: ${node.health.status === 'online' ? 'online' : 'not checked yet'}, ${left}`;
}

/** The API's refusals that are about the node: said next to the node choice. */
export const NODE_ERROR_CODES: readonly string[] = ['NODE_FULL', 'NODE_MAINTENANCE'];
