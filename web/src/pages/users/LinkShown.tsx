import { useEffect, useRef } from 'react';
import { ShownOnce } from '../../components/ShownOnce';
import type { SetPasswordLink } from '../../hooks/useUsers';
import { formatWhen } from './users';

/**
 * A one-time set-password link as the API answered it, shown this once: the panel keeps only a
 * hash of its token, so a lost link is replaced by a new one (Reset password), never shown again.
 * It takes the focus when shown: the form that asked for it is gone.
 */
export function LinkShown({
  username,
  link,
  onDone,
}: {
  username: string;
  link: SetPasswordLink;
  onDone: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <div ref={ref} tabIndex={-1}>
      <ShownOnce
        label={`Link for ${username} to set a password`}
        value={link.url}
        doneLabel="Done, I have sent it"
        onDone={onDone}
      >
        Send it to {username} yourself (the panel sends no mail). It works once, until{' '}
        {formatWhen(link.expiresAt)}: whoever opens it sets the password of {username}.
      </ShownOnce>
    </div>
  );
}
