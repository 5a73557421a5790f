import { useState } from 'react';
import { Alert } from '../../components/Alert';
import { recoveryCodesText } from './recoveryCodes';
import styles from './ProfilePage.module.css';

/**
 * Recovery codes, shown this once: the API keeps only their hashes. Copy and "Download as text"
 * help to put them away; "I have stored them" ends the showing.
 */
export function RecoveryCodes({
  username,
  codes,
  onDone,
}: {
  username: string;
  codes: readonly string[];
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const download = () => {
    const text = recoveryCodesText(username, codes, new Date());
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const anchor = document.createElement('a');
    anchor.href = url;
    anchor.download = `recovery-codes-${username}.txt`;
    anchor.hidden = true;
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    // The browser has taken the bytes once the click is handled.
    setTimeout(() => {
      URL.revokeObjectURL(url);
    }, 0);
  };

  return (
    <div className={styles.codes} role="group" aria-labelledby="codes-title">
      <h3 id="codes-title">Your recovery codes</h3>
      <Alert tone="info">
        <strong>Store these now:</strong> this is the only time they are shown. Each one signs you
        in once if you lose your authenticator app.
      </Alert>
      <ol className={styles.codeList} aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div className={styles.buttons}>
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            navigator.clipboard.writeText(codes.join('\n')).then(
              () => {
                setCopied('yes');
              },
              () => {
                setCopied('no');
              },
            );
          }}
        >
          Copy codes
        </button>
        <button type="button" className="button secondary" onClick={download}>
          Download as text
        </button>
        <button type="button" className="button primary" onClick={onDone}>
          I have stored them
        </button>
      </div>
      {copied === 'yes' && <Alert tone="success">Copied to the clipboard</Alert>}
      {copied === 'no' && (
        <Alert tone="error">The browser did not allow copying; select the codes instead</Alert>
      )}
    </div>
  );
}
