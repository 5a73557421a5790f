import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import {
  useEnrolmentDone,
  useRenewRecoveryCodes,
  useTwoFactorDisable,
  useTwoFactorEnable,
  useTwoFactorSetup,
  useTwoFactorStatus,
} from '../../hooks/useTwoFactor';
import page from '../Page.module.css';
import { RecoveryCodes } from './RecoveryCodes';
import { svgImageUrl } from './recoveryCodes';
import styles from './ProfilePage.module.css';

/**
 * Two-factor sign-in of one's own account: whether it is on, turning it on (password, then the
 * QR code or the secret in an authenticator app, then a code of it, then the recovery codes shown
 * once), turning it off, and new recovery codes. `onEnrolled` runs once the codes were put away.
 */
export function TwoFactorSection({
  username,
  hasPassword,
}: {
  username: string;
  hasPassword: boolean;
}) {
  const status = useTwoFactorStatus();
  const done = useEnrolmentDone();
  // Held here, not in the forms: the status refetched after an enable must not hide them.
  const [codes, setCodes] = useState<readonly string[] | null>(null);

  let body;
  if (codes !== null) {
    body = (
      <RecoveryCodes
        username={username}
        codes={codes}
        onDone={() => {
          setCodes(null);
          void done();
        }}
      />
    );
  } else if (status.isPending) {
    body = (
      <p className={page.muted} role="status">
        Loading…
      </p>
    );
  } else if (status.isError) {
    body = <Alert tone="error">{errorMessage(status.error)}</Alert>;
  } else if (!status.data.enabled) {
    body = (
      <>
        <p>
          <strong>Off.</strong> Signing in takes your password only.
          {status.data.required && ' Your role requires two-factor sign-in: set it up now.'}
        </p>
        {hasPassword ? (
          <Enrol onEnabled={setCodes} />
        ) : (
          <p className={page.muted}>
            Set a password first: two-factor sign-in adds a code to signing in with a password.
          </p>
        )}
      </>
    );
  } else {
    const left = status.data.recoveryCodesLeft;
    body = (
      <>
        <p>
          <strong>On</strong>
          {status.data.enabledAt !== null && (
            <>
              {' '}
              since{' '}
              <time dateTime={status.data.enabledAt}>
                {new Date(status.data.enabledAt).toLocaleString()}
              </time>
            </>
          )}
          . Signing in asks for a code from your authenticator app. {left} recovery{' '}
          {left === 1 ? 'code' : 'codes'} left.
        </p>
        {left <= 2 && <Alert tone="info">Few recovery codes are left: make new ones below.</Alert>}
        <PasswordAndCodeForm
          id="renew-codes"
          title="New recovery codes"
          note="The old codes stop working."
          action="Make new recovery codes"
          useAction={useRenewRecoveryCodes}
          onDone={setCodes}
        />
        {status.data.required ? (
          <p className={page.muted}>
            Your role requires two-factor sign-in: it cannot be turned off.
          </p>
        ) : (
          <PasswordAndCodeForm
            id="disable-2fa"
            title="Turn off two-factor sign-in"
            note="Signing in will take your password only."
            action="Turn off"
            danger
            useAction={useTwoFactorDisable}
            onDone={() => undefined}
          />
        )}
      </>
    );
  }

  return (
    <section className={`${page.card} ${styles.twoFactor}`} aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      {body}
    </section>
  );
}

/** Password, then the QR code and the secret, then a code of the app. */
function Enrol({ onEnabled }: { onEnabled: (codes: readonly string[]) => void }) {
  const setup = useTwoFactorSetup();
  const enable = useTwoFactorEnable();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');

  if (setup.data === undefined) {
    const submit = (event: SyntheticEvent) => {
      event.preventDefault();
      setup.mutate(password, {
        onSuccess: () => {
          setPassword('');
        },
      });
    };
    return (
      <form className={styles.form} onSubmit={submit} aria-label="Set up two-factor sign-in">
        <Field
          label="Current password"
          name="password"
          type="password"
          required
          autoComplete="current-password"
          value={password}
          onChange={(event) => {
            setPassword(event.target.value);
          }}
        />
        {setup.isError && <Alert tone="error">{errorMessage(setup.error)}</Alert>}
        <div>
          <button type="submit" className="button primary" disabled={setup.isPending}>
            {setup.isPending ? 'Setting up…' : 'Set up two-factor sign-in'}
          </button>
        </div>
      </form>
    );
  }

  const { secret, otpauthUrl, qrSvg } = setup.data;
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    enable.mutate(code.trim(), { onSuccess: onEnabled });
  };
  return (
    <form className={styles.form} onSubmit={submit} aria-label="Turn on two-factor sign-in">
      <p className={styles.step}>
        1. Scan this QR code with an authenticator app (Aegis, Google Authenticator, 1Password…), or
        type the secret key into it.
      </p>
      <img
        className={styles.qr}
        src={svgImageUrl(qrSvg)}
        alt="QR code of the two-factor secret, for an authenticator app"
      />
      <p className={styles.step}>
        Secret key: <code className={styles.secret}>{secret}</code>
        <br />
        <a href={otpauthUrl}>Open in an authenticator app on this device</a>
      </p>
      <p className={styles.step}>2. Enter the 6-digit code the app shows to confirm.</p>
      <Field
        label="Code from the app"
        name="code"
        required
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="[0-9 ]*"
        maxLength={8}
        value={code}
        onChange={(event) => {
          setCode(event.target.value);
        }}
      />
      {enable.isError && <Alert tone="error">{errorMessage(enable.error)}</Alert>}
      <FormButtons
        submit="Turn on"
        pendingSubmit="Turning on…"
        pending={enable.isPending}
        onCancel={() => {
          enable.reset();
          setup.reset();
          setCode('');
        }}
      />
    </form>
  );
}

interface PasswordAndCodeAction<T> {
  readonly mutate: (
    body: { password: string; code: string },
    options: { onSuccess: (answer: T) => void },
  ) => void;
  readonly isPending: boolean;
  readonly isError: boolean;
  readonly error: unknown;
}

/** A form asking the password and a code (or a recovery code) for one action. */
function PasswordAndCodeForm<T>({
  id,
  title,
  note,
  action,
  danger = false,
  useAction,
  onDone,
}: {
  id: string;
  title: string;
  note: string;
  action: string;
  danger?: boolean;
  useAction: () => PasswordAndCodeAction<T>;
  onDone: (answer: T) => void;
}) {
  const run = useAction();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    run.mutate(
      { password, code: code.trim() },
      {
        onSuccess: (answer) => {
          setPassword('');
          setCode('');
          onDone(answer);
        },
      },
    );
  };
  return (
    <form className={styles.form} onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className={styles.step}>
        {title}
      </h3>
      <p className={`${page.muted} ${styles.step}`}>{note}</p>
      <Field
        label="Current password"
        name="password"
        type="password"
        required
        autoComplete="current-password"
        value={password}
        onChange={(event) => {
          setPassword(event.target.value);
        }}
      />
      <Field
        label="Code from the app, or a recovery code"
        name="code"
        required
        autoComplete="one-time-code"
        autoCapitalize="none"
        spellCheck={false}
        value={code}
        onChange={(event) => {
          setCode(event.target.value);
        }}
      />
      {run.isError && <Alert tone="error">{errorMessage(run.error)}</Alert>}
      <div>
        <button
          type="submit"
          className={`button ${danger ? `secondary ${styles.danger}` : 'secondary'}`}
          disabled={run.isPending}
        >
          {action}
        </button>
      </div>
    </form>
  );
}
