import type { ReactNode } from 'react';
import styles from './Alert.module.css';

/**
 * A message about the last action. Errors are announced at once (`role="alert"`); other notes
 * politely (`role="status"`).
 */
export function Alert({
  tone,
  children,
}: {
  tone: 'error' | 'success' | 'info';
  children: ReactNode;
}) {
  return (
    <p className={`${styles.alert} ${styles[tone]}`} role={tone === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}
