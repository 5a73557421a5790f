import { useState } from 'react';
import { Field } from '../../components/Field';
import { useTwoFactorStatus } from '../../hooks/useTwoFactor';
import page from '../Page.module.css';
import type { IdentityErrors } from './confirmIdentity';
import keyForm from './KeyForm.module.css';

/**
 * What a form that makes a key (an API key, an SSH key) asks to confirm it is the account's
 * owner: the password, and a code when two-factor sign-in is on; nothing for an account without a
 * password, which the API lets make a key only soon after signing in (docs/api.md, API keys).
 */
export function useConfirmIdentity(hasPassword: boolean) {
  const twoFactor = useTwoFactorStatus();
  const asksCode = hasPassword && twoFactor.data?.enabled === true;
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const body: { password?: string; code?: string } = {
    ...(hasPassword ? { password } : {}),
    ...(asksCode ? { code } : {}),
  };
  return {
    hasPassword,
    asksCode,
    password,
    code,
    setPassword,
    setCode,
    /** The request body's fields: only those the account is asked for. */
    body,
    /** Once the key is made: both fields emptied. */
    clear: () => {
      setPassword('');
      setCode('');
    },
  };
}

export type ConfirmIdentity = ReturnType<typeof useConfirmIdentity>;

/**
 * "Your password" and "Two-factor code" (or why nothing is asked), each with what is wrong with it
 * underneath. `name` prefixes the inputs' names (`<name>-password`, `<name>-code`); `noPassword`
 * tells an account without a password when it may make the key.
 */
export function ConfirmIdentityFields({
  identity,
  errors,
  name,
  noPassword,
}: {
  identity: ConfirmIdentity;
  errors: IdentityErrors;
  name: string;
  noPassword: string;
}) {
  return (
    <div className={keyForm.fields}>
      {identity.hasPassword ? (
        <Field
          label="Your password"
          name={`${name}-password`}
          type="password"
          required
          autoComplete="current-password"
          hint="A key outlives this session: confirm it is you"
          value={identity.password}
          error={errors.password}
          onChange={(event) => {
            identity.setPassword(event.target.value);
          }}
        />
      ) : (
        <p className={page.muted}>{noPassword}</p>
      )}
      {identity.asksCode && (
        <Field
          label="Two-factor code"
          name={`${name}-code`}
          required
          autoComplete="one-time-code"
          inputMode="text"
          maxLength={64}
          hint="From your authenticator app, or a recovery code"
          value={identity.code}
          error={errors.code}
          onChange={(event) => {
            identity.setCode(event.target.value);
          }}
        />
      )}
    </div>
  );
}
