import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Confirm } from '../../components/Confirm';
import { FormButtons } from '../../components/FormButtons';
import {
  useResetPassword,
  useTurnOffTwoFactor,
  type SetPasswordLink,
  type User,
} from '../../hooks/useUsers';
import {
  hasProblems,
  passwordProblems,
  refusalByField,
  resetBody,
  type PasswordDraft,
  type Problems,
} from './accounts';
import { LinkShown } from './LinkShown';
import { PasswordChoice } from './PasswordChoice';
import styles from './UsersPage.module.css';

/**
 * An admin's help for a person who cannot sign in: a new password or a one-time link (which
 * signs them out everywhere and revokes their API keys, as the API does), and turning off their
 * two-factor sign-in when they lost their second factor.
 */
export function SignInControls({ user, isMe }: { user: User; isMe: boolean }) {
  return (
    <div className={styles.part}>
      <ResetPassword user={user} isMe={isMe} />
      <TwoFactorOff user={user} />
    </div>
  );
}

const EMPTY: PasswordDraft = { choice: 'link', password: '', confirmation: '' };

interface Outcome {
  readonly link: SetPasswordLink | null;
  readonly revokedApiKeys: number;
}

/** " 2 API keys were revoked." after the sentence of a reset, or nothing without any. */
function revokedKeys(count: number): string {
  if (count === 0) return '';
  return count === 1 ? ' Their one API key was revoked.' : ` Their ${count} API keys were revoked.`;
}

function ResetPassword({ user, isMe }: { user: User; isMe: boolean }) {
  const reset = useResetPassword(user.username);
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(EMPTY);
  const [problems, setProblems] = useState<Problems<'password' | 'confirmation'>>({});
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const openRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  const linkShown = (outcome?.link ?? null) !== null;
  useEffect(() => {
    // Cancelling gives the focus back to "Reset password"; a link made takes it.
    if (open) wasOpen.current = true;
    else if (wasOpen.current && !linkShown) openRef.current?.focus();
    // Only a change of `open` moves the focus; `linkShown` is read as it is then.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const refusal =
    reset.error instanceof ApiError ? refusalByField(['password'], reset.error) : undefined;
  const shown = { ...refusal?.fields, ...problems };
  const close = () => {
    setDraft(EMPTY);
    setProblems({});
    reset.reset();
    setOpen(false);
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const found = passwordProblems(draft);
    setProblems(found);
    if (hasProblems(found)) return;
    reset.mutate(resetBody(draft), {
      onSuccess: ({ setPasswordLink, revokedApiKeys }) => {
        setOutcome({ link: setPasswordLink, revokedApiKeys });
        setDraft(EMPTY);
        setOpen(false);
      },
    });
  };

  if (!open) {
    return (
      <>
        <div>
          <button
            ref={openRef}
            type="button"
            className="button secondary"
            onClick={() => {
              setOutcome(null);
              setOpen(true);
            }}
          >
            Reset password
          </button>
        </div>
        {outcome !== null &&
          (outcome.link === null ? (
            <Alert tone="success">
              Password set: {user.username} is signed out everywhere.
              {revokedKeys(outcome.revokedApiKeys)}
            </Alert>
          ) : (
            <>
              <Alert tone="success">
                New link made: the old password of {user.username} no longer works, they are signed
                out everywhere, and any earlier link stops working.
                {revokedKeys(outcome.revokedApiKeys)}
              </Alert>
              <LinkShown
                username={user.username}
                link={outcome.link}
                onDone={() => {
                  setOutcome(null);
                  openRef.current?.focus();
                }}
              />
            </>
          ))}
      </>
    );
  }
  return (
    <form
      className={`${styles.part} ${styles.confirm}`}
      onSubmit={submit}
      noValidate
      aria-label={`Reset the password of ${user.username}`}
    >
      <p className={styles.question}>Reset the password of {user.username}</p>
      <p className={styles.hint}>
        {user.signIn.hasPassword
          ? `This signs ${user.username} out everywhere and revokes their API keys.`
          : `${user.username} has no password yet. This also signs them out everywhere and revokes their API keys.`}
        {isMe ? ' This is your own account: this browser is signed out too.' : ''}
      </p>
      <PasswordChoice
        legend="New password"
        linkLabel="Make a link for them to set it"
        linkHint={
          user.signIn.hasPassword
            ? 'Their current password stops working now; the link, shown once, works once, for 24 hours'
            : 'A link shown once, for you to send; it works once, for 24 hours'
        }
        passwordLabel="Set a new password now"
        draft={draft}
        problems={shown}
        onChange={(next) => {
          setDraft(next);
          setProblems({});
          reset.reset();
        }}
      />
      {reset.isError && (refusal === undefined || refusal.rest) && (
        <Alert tone="error">{errorMessage(reset.error)}</Alert>
      )}
      <FormButtons
        className={styles.buttons}
        submitClassName={`button ${styles.danger}`}
        submit={draft.choice === 'link' ? 'Make the link' : 'Set the password'}
        pendingSubmit="Resetting…"
        pending={reset.isPending}
        onCancel={close}
      />
    </form>
  );
}

function TwoFactorOff({ user }: { user: User }) {
  const turnOff = useTurnOffTwoFactor(user.username);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState(false);
  if (done) {
    return <Alert tone="success">Two-factor sign-in is off for {user.username}.</Alert>;
  }
  if (!user.twoFactor) return null;
  if (!confirming) {
    return (
      <div>
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            setConfirming(true);
          }}
        >
          Turn off two-factor
        </button>
      </div>
    );
  }
  return (
    <Confirm
      label={`Turn off two-factor sign-in for ${user.username}?`}
      action="Turn off two-factor"
      pendingAction="Turning off…"
      pending={turnOff.isPending}
      error={turnOff.error}
      autoFocus
      onConfirm={() => {
        // Not mutate's own callbacks: the list fetched again may re-render the row first.
        turnOff.mutateAsync().then(
          () => {
            setConfirming(false);
            setDone(true);
          },
          () => undefined, // shown from turnOff.error
        );
      }}
      onCancel={() => {
        turnOff.reset();
        setConfirming(false);
      }}
    >
      Turn off two-factor sign-in for {user.username}? They then sign in with their password alone:
      the codes of their authenticator app and their recovery codes stop working. If their role
      requires two-factor sign-in, they are asked to set it up again at their next sign-in.
    </Confirm>
  );
}
