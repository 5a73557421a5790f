import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useMe } from '../../hooks/useMe';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { ApiKeysSection } from './ApiKeysSection';
import { PasswordForm } from './PasswordForm';
import { ProfileStats } from './ProfileStats';
import styles from './ProfilePage.module.css';
import { RenameForm } from './RenameForm';
import { SshKeysSection } from './SshKeysSection';
import { TwoFactorSection } from './TwoFactorSection';

/**
 * The signed-in account: its statistics, a new name, a new password, two-factor sign-in, its
 * API keys, and its SSH keys for SFTP.
 */
export function ProfilePage() {
  useTitle('Profile');
  const me = useMe();
  return (
    <>
      <div className={page.pageHeader}>
        <h1>Profile</h1>
      </div>
      <ProfileStats signIn={me.data?.signIn} />
      {me.isError ? (
        // The shell shows the reason already; the forms need to know the account.
        <Alert tone="error">{errorMessage(me.error)}</Alert>
      ) : me.data === undefined ? (
        <p className={page.muted} role="status">
          Loading…
        </p>
      ) : (
        <div className={styles.forms}>
          <RenameForm hasPassword={me.data.signIn.hasPassword} />
          <PasswordForm
            hasPassword={me.data.signIn.hasPassword}
            providers={me.data.signIn.providers}
          />
          <TwoFactorSection username={me.data.username} hasPassword={me.data.signIn.hasPassword} />
        </div>
      )}
      {me.data !== undefined && <ApiKeysSection hasPassword={me.data.signIn.hasPassword} />}
      {me.data !== undefined && <SshKeysSection hasPassword={me.data.signIn.hasPassword} />}
    </>
  );
}
