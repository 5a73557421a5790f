import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field, SelectField } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import { useCreateUser, type Role, type SetPasswordLink } from '../../hooks/useUsers';
import page from '../Page.module.css';
import {
  hasProblems,
  newUserBody,
  newUserProblems,
  refusalByField,
  type NewUserDraft,
  type NewUserField,
  type Problems,
} from './accounts';
import { LinkShown } from './LinkShown';
import { PasswordChoice } from './PasswordChoice';
import { ROLES } from './users';
import styles from './UsersPage.module.css';

const EMPTY: NewUserDraft = {
  username: '',
  role: 'user',
  choice: 'link',
  password: '',
  confirmation: '',
};

const FIELDS: readonly NewUserField[] = ['username', 'password'];

// A banned account is made by banning one: offering it here would make an account nobody uses.
const ROLE_OPTIONS = ROLES.filter((role) => role !== 'banned').map((role) => ({
  value: role,
  label: role,
}));

type Created =
  | { readonly username: string; readonly role: Role; readonly link: SetPasswordLink }
  | { readonly username: string; readonly role: Role; readonly link: null };

/**
 * "Add user" (admins): a name, a role, and either a one-time link for the person to set their
 * password or a password typed now. The link is shown once, then the form is gone.
 */
export function AddUser() {
  const create = useCreateUser();
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(EMPTY);
  const [problems, setProblems] = useState<Problems<NewUserField>>({});
  const [created, setCreated] = useState<Created | null>(null);
  const openRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    // Cancelling gives the focus back to the button that opened the form; a link made takes it.
    if (open) wasOpen.current = true;
    else if (wasOpen.current && created === null) openRef.current?.focus();
    // Only a change of `open` moves the focus; `created` is read as it is then.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const refusal =
    create.error instanceof ApiError ? refusalByField(FIELDS, create.error) : undefined;
  const shown: Problems<NewUserField> = { ...refusal?.fields, ...problems };
  const change = (next: NewUserDraft) => {
    setDraft(next);
    setProblems({});
    create.reset();
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const found = newUserProblems(draft);
    setProblems(found);
    if (hasProblems(found)) return;
    create.mutate(newUserBody(draft), {
      onSuccess: ({ user, setPasswordLink }) => {
        setCreated({ username: user.username, role: user.role, link: setPasswordLink });
        setDraft(EMPTY);
        setOpen(false);
      },
    });
  };

  return (
    <section className={page.card} aria-labelledby="add-user-title">
      <div className={styles.cardHeader}>
        <h2 id="add-user-title">Add user</h2>
        {!open && (
          <button
            ref={openRef}
            type="button"
            className="button primary"
            onClick={() => {
              setCreated(null);
              create.reset();
              setOpen(true);
            }}
          >
            Add user
          </button>
        )}
      </div>
      {created !== null &&
        (created.link === null ? (
          <Alert tone="success">
            {created.username} was added as {created.role}: they sign in with the password you set.
          </Alert>
        ) : (
          <>
            <Alert tone="success">
              {created.username} was added as {created.role}.
            </Alert>
            <LinkShown
              username={created.username}
              link={created.link}
              onDone={() => {
                setCreated(null);
                openRef.current?.focus();
              }}
            />
          </>
        ))}
      {open && (
        <form className={styles.addForm} onSubmit={submit} noValidate aria-label="New user">
          <div className={styles.addRow}>
            <Field
              label="Username"
              name="username"
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              autoFocus
              hint="3 to 32 letters, digits, _ . or -"
              error={shown.username}
              value={draft.username}
              onChange={(event) => {
                change({ ...draft, username: event.target.value });
              }}
            />
            <SelectField
              label="Role"
              value={draft.role}
              options={ROLE_OPTIONS}
              onChange={(event) => {
                change({ ...draft, role: event.target.value as Role });
              }}
            />
          </div>
          <PasswordChoice
            legend="Their password"
            linkLabel="Send them a link to set it"
            linkHint="A link shown once, for you to send; it works once, for 24 hours"
            passwordLabel="Set a password now"
            draft={draft}
            problems={shown}
            onChange={(next) => {
              change({ ...draft, ...next });
            }}
          />
          {create.isError && (refusal === undefined || refusal.rest) && (
            <Alert tone="error">{errorMessage(create.error)}</Alert>
          )}
          <FormButtons
            className={styles.buttons}
            submit="Add user"
            pendingSubmit="Adding…"
            pending={create.isPending}
            onCancel={() => {
              setDraft(EMPTY);
              setProblems({});
              create.reset();
              setOpen(false);
            }}
          />
        </form>
      )}
    </section>
  );
}
