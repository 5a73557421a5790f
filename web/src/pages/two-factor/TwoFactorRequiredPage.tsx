import { Alert } from '../../components/Alert';
import { useTitle } from '../../hooks/useTitle';
import { TwoFactorSection } from '../profile/TwoFactorSection';
import styles from '../Page.module.css';

/**
 * All an account sees while its role requires two-factor sign-in it has not set up: the API
 * refuses everything else (403 `TWO_FACTOR_REQUIRED`) until it is on, so the panel asks for it
 * here instead of showing pages that would all fail.
 */
export function TwoFactorRequiredPage({
  role,
  username,
  hasPassword,
}: {
  role: string;
  username: string;
  hasPassword: boolean;
}) {
  useTitle('Set up two-factor sign-in');
  return (
    <>
      <div className={styles.pageHeader}>
        <h1>Set up two-factor sign-in</h1>
      </div>
      <Alert tone="info">
        An administrator requires two-factor sign-in of every {role} account. Set it up below to go
        on using the panel: you will need an authenticator app on your phone or computer.
      </Alert>
      <TwoFactorSection username={username} hasPassword={hasPassword} />
    </>
  );
}
