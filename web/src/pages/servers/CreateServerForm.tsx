import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage, fieldError } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field, SelectField } from '../../components/Field';
import { useNodes } from '../../hooks/useNodes';
import { useCreateServer, useFreePort } from '../../hooks/useServers';
import { usePanelSettings } from '../../hooks/useSettings';
import { useTemplate, useTemplates, type TemplateVariable } from '../../hooks/useTemplates';
import page from '../Page.module.css';
import { LimitFields } from '../server/settings/LimitFields';
import {
  limitErrorsFrom,
  limitsFormFrom,
  type LimitErrors,
  type LimitsForm,
} from '../server/settings/settingsForm';
import {
  EMPTY_FORM,
  NODE_ERROR_CODES,
  newServerFrom,
  nodeOptionLabel,
  portProblem,
  type NewServerForm,
} from './newServer';
import styles from './ServersPage.module.css';

/** Each variable's default, by environment name: what a new server from the template starts with. */
const defaults = (variables: readonly TemplateVariable[]) =>
  Object.fromEntries(variables.map((variable) => [variable.envVariable, variable.defaultValue]));

/**
 * Admins only: a new server, from a template (its commands and variables) or from a start
 * command (display name, stop command and port optional), with its limits prefilled from the
 * panel's defaults (`GET /api/admin/settings`, docs/web.md "Creating a server"). The port is
 * required when the template's start-up or config files use it, and prefilled then with the next
 * free port of SERVER_PORT_RANGE on the node chosen (`GET /api/servers/allocations/free`), which
 * is offered always.
 * The node is automatic unless one is chosen (`GET /api/admin/nodes`, each with its health and
 * the memory it has left); the API's refusal of it is said next to the choice.
 */
export function CreateServerForm() {
  const create = useCreateServer();
  const templates = useTemplates();
  const [form, setForm] = useState(EMPTY_FORM);
  const [created, setCreated] = useState<string | null>(null);
  const [limitErrors, setLimitErrors] = useState<LimitErrors>({});
  const [portTouched, setPortTouched] = useState(false);
  const [portError, setPortError] = useState<string | undefined>(undefined);
  const freePort = useFreePort(true, form.node === '' ? null : form.node);
  const offered = freePort.data?.port;
  const settings = usePanelSettings();
  const serverDefaults = settings.data?.serverDefaults;
  // The limits shown: as edited, else the panel's defaults once they are in.
  const limits: LimitsForm | null =
    form.limits ?? (serverDefaults === undefined ? null : limitsFormFrom(serverDefaults));
  const setLimit = <K extends keyof LimitsForm>(key: K, value: LimitsForm[K]) => {
    if (limits === null) return;
    setForm((current) => ({ ...current, limits: { ...limits, [key]: value } }));
    // The field's refusal goes once it is edited; the others stay until the next try.
    const field = key === 'diskUnit' ? 'disk' : key;
    setLimitErrors((current) => ({ ...current, [field]: undefined }));
  };
  const nodes = useNodes();
  const template = useTemplate(form.template === '' ? null : form.template);
  // The variables shown are those of the template chosen, once its details are in.
  const variables = form.template === '' ? [] : (template.data?.variables ?? []);
  // A template whose start-up or config files use the port: the free one is filled in until the
  // field is edited.
  const needsPort = form.template !== '' && template.data?.needsPort === true;
  const port =
    needsPort && !portTouched && form.port === '' && offered !== undefined
      ? String(offered)
      : form.port;
  const setPort = (value: string) => {
    setPortTouched(true);
    setPortError(undefined);
    setForm((current) => ({ ...current, port: value }));
  };
  const set =
    (key: 'name' | 'displayName' | 'startCommand' | 'stopCommand') =>
    (event: { target: { value: string } }) => {
      setForm((current) => ({ ...current, [key]: event.target.value }));
    };
  const choose = (id: string) => {
    setForm((current) => ({ ...current, template: id, variables: {} }));
  };
  const valueOf = (variable: TemplateVariable) =>
    form.variables[variable.envVariable] ?? variable.defaultValue;
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setCreated(null);
    create.reset();
    const filled: NewServerForm = {
      ...form,
      port,
      variables: { ...defaults(variables), ...form.variables },
      limits,
    };
    const missingPort = portProblem(port, needsPort, offered);
    setPortError(missingPort);
    if (missingPort !== undefined) return;
    const request = newServerFrom(filled);
    if ('errors' in request) {
      setLimitErrors(request.errors);
      return;
    }
    setLimitErrors({});
    create.mutate(request.server, {
      onSuccess: (server) => {
        setCreated(server.name);
        setForm(EMPTY_FORM);
        setPortTouched(false);
      },
      onError: (error) => {
        if (error instanceof ApiError) setLimitErrors(limitErrorsFrom(error).fields);
      },
    });
  };
  // A refusal of the node is said next to it, of the limits alone next to them; anything else
  // in an alert.
  const nodeError =
    create.error instanceof ApiError &&
    (NODE_ERROR_CODES.includes(create.error.code) || fieldError(create.error, 'node') !== undefined)
      ? create.error.message
      : undefined;
  const showAlert =
    create.isError &&
    nodeError === undefined &&
    (!(create.error instanceof ApiError) || limitErrorsFrom(create.error).rest);
  const nodeOptions = [
    { value: '', label: 'Automatic: the node with the most memory left' },
    ...(nodes.data ?? []).map((node) => ({ value: node.name, label: nodeOptionLabel(node) })),
  ];
  const templateOptions = [
    { value: '', label: 'None: a start command' },
    ...(templates.data ?? []).map((option) => ({ value: option.id, label: option.name })),
  ];

  return (
    <section className={page.card} aria-labelledby="create-server-title">
      <h2 id="create-server-title">Create server</h2>
      <form className={styles.form} onSubmit={submit}>
        <Field
          label="Name"
          name="name"
          required
          autoCapitalize="none"
          spellCheck={false}
          hint="Letters, digits, _ . - (at most 64); it names the server's folder and cannot change"
          value={form.name}
          onChange={set('name')}
        />
        <Field
          label="Display name"
          name="displayName"
          hint="Optional"
          value={form.displayName}
          onChange={set('displayName')}
        />
        <SelectField
          label="Template"
          name="template"
          options={templateOptions}
          value={form.template}
          error={templates.isError ? errorMessage(templates.error) : undefined}
          hint={
            templates.isPending
              ? 'Loading the templates…'
              : 'Optional: a template gives the commands, the variables and an install'
          }
          onChange={(event) => {
            choose(event.target.value);
          }}
        />
        <Field
          label="Port"
          name="port"
          inputMode="numeric"
          autoComplete="off"
          // Not `required`: the browser's own bubble would keep our message (with the free
          // port) from showing next to the field.
          aria-required={needsPort}
          hint={portHint(needsPort, form.template !== '', freePort.data)}
          error={portError}
          value={port}
          onChange={(event) => {
            setPort(event.target.value);
          }}
          after={
            offered !== undefined && port !== String(offered) ? (
              <button
                type="button"
                className="button secondary"
                onClick={() => {
                  setPort(String(offered));
                }}
              >
                Use {offered}
              </button>
            ) : undefined
          }
        />
        {form.template === '' ? (
          <>
            <Field
              label="Start command"
              name="startCommand"
              required
              spellCheck={false}
              hint="Run without a shell in the server's folder, e.g. java -Xmx2G -jar server.jar nogui"
              value={form.startCommand}
              onChange={set('startCommand')}
            />
            <Field
              label="Stop command"
              name="stopCommand"
              spellCheck={false}
              hint="Optional: a console line that stops the server, e.g. stop"
              value={form.stopCommand}
              onChange={set('stopCommand')}
            />
          </>
        ) : (
          <fieldset className={styles.variables} aria-busy={template.isPending}>
            <legend>Variables</legend>
            {template.isError ? (
              <Alert tone="error">{errorMessage(template.error)}</Alert>
            ) : template.isPending ? (
              <p className={page.muted} role="status">
                Loading the template…
              </p>
            ) : variables.length === 0 ? (
              <p className={page.muted}>This template has no variables.</p>
            ) : (
              variables.map((variable) => (
                <Field
                  key={variable.envVariable}
                  label={variable.name}
                  name={variable.envVariable}
                  spellCheck={false}
                  autoCapitalize="none"
                  hint={[variable.description, variable.envVariable]
                    .filter((part) => part !== '')
                    .join(' · ')}
                  value={valueOf(variable)}
                  onChange={(event) => {
                    const value = event.target.value;
                    setForm((current) => ({
                      ...current,
                      variables: { ...current.variables, [variable.envVariable]: value },
                    }));
                  }}
                />
              ))
            )}
          </fieldset>
        )}
        <SelectField
          label="Node"
          name="node"
          options={nodeOptions}
          value={form.node}
          error={
            nodeError ??
            (nodes.isError
              ? `The nodes could not be loaded (${errorMessage(nodes.error)}); automatic still works`
              : undefined)
          }
          hint="The machine it runs on; automatic picks the node with the most memory left that fits its memory limit"
          onChange={(event) => {
            const value = event.target.value;
            create.reset();
            setForm((current) => ({ ...current, node: value }));
          }}
        />
        <fieldset
          className={styles.limits}
          aria-describedby="create-limits-hint"
          aria-busy={settings.isPending}
        >
          <legend>Limits</legend>
          <p id="create-limits-hint" className={page.muted}>
            Prefilled with the panel&apos;s defaults (Settings page); empty memory, CPU or disk: no
            limit. They can be changed later in the server&apos;s Settings tab.
          </p>
          {settings.isError ? (
            <Alert tone="error">
              The default limits could not be loaded ({errorMessage(settings.error)}); the server
              gets them when it is created.
            </Alert>
          ) : limits === null ? (
            <p className={page.muted} role="status">
              Loading the default limits…
            </p>
          ) : (
            <LimitFields
              values={limits}
              errors={limitErrors}
              pidsNote={
                serverDefaults === undefined
                  ? 'every server has one'
                  : `every server has one; the panel's default is ${serverDefaults.pids}`
              }
              onChange={setLimit}
            />
          )}
        </fieldset>
        <div className={styles.actions}>
          {showAlert && <Alert tone="error">{errorMessage(create.error)}</Alert>}
          {create.isError && !showAlert && (
            <Alert tone="error">
              Not created: see the {nodeError === undefined ? 'limits' : 'node'} marked above
            </Alert>
          )}
          {created !== null && <Alert tone="success">Created {created}</Alert>}
          <div>
            <button type="submit" className="button primary" disabled={create.isPending}>
              Create server
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}

/** Whether the port is needed and why, on every address, and the next free one. */
function portHint(
  needed: boolean,
  fromTemplate: boolean,
  free: { port: number; range: { min: number; max: number } } | undefined,
): string {
  const why = needed
    ? "Required: the template's start-up or config files use the server's port"
    : fromTemplate
      ? 'Optional: the template does not use a port'
      : 'Optional: the primary port';
  const range =
    free === undefined
      ? ''
      : `; ${free.port} is the next free one (the range is ${free.range.min}-${free.range.max})`;
  return `${why}, on every address (0.0.0.0)${range}`;
}
