import { useState } from 'react';
import { useMe } from '../../../hooks/useMe';
import { useSftp } from '../../../hooks/useSftp';
import styles from './Files.module.css';
import { sftpAddress } from './sftp';

/**
 * "Connect with SFTP: sftp://alice.survival@panel.example:2022" and Copy, when the panel's SFTP
 * server runs (docs/sftp.md); nothing otherwise. The host is the one the browser reached the
 * panel by.
 */
export function SftpLine({ server }: { server: string }) {
  const sftp = useSftp();
  const me = useMe();
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const info = sftp.data;
  if (info === undefined || !info.enabled || info.port === null || me.data === undefined) {
    return null;
  }
  const address = sftpAddress(me.data.username, server, window.location.hostname, info.port);
  const copy = () => {
    try {
      navigator.clipboard.writeText(address).then(
        () => {
          setCopied('yes');
        },
        () => {
          setCopied('no');
        },
      );
    } catch {
      // No clipboard outside a secure context (plain HTTP to another host than localhost).
      setCopied('no');
    }
  };
  return (
    <div className={styles.sftp} role="group" aria-label="Connect with SFTP">
      <span>Connect with SFTP:</span>
      <code className={styles.sftpAddress}>{address}</code>
      <button
        type="button"
        className="button secondary"
        aria-label="Copy the SFTP address"
        onClick={copy}
      >
        Copy
      </button>
      {copied !== null && (
        <span className={styles.sftpNote} role="status">
          {copied === 'yes' ? 'Copied' : 'The browser did not allow copying: select the address'}
        </span>
      )}
    </div>
  );
}
