import { describePermission, PERMISSIONS, type Permission } from '../permissions';
import styles from './People.module.css';

/**
 * The nine permissions as checkboxes, each named "<who>: <permission>". What the caller does not
 * hold is disabled: nobody grants beyond their own permissions.
 */
export function PermissionBoxes({
  who,
  legend,
  chosen,
  grantable,
  disabled = false,
  onChange,
}: {
  /** Whose permissions these are, the start of each checkbox's name. */
  who: string;
  legend: string;
  chosen: ReadonlySet<Permission>;
  /** What the caller may grant (everything, for an admin). */
  grantable: ReadonlySet<Permission>;
  disabled?: boolean;
  onChange: (next: ReadonlySet<Permission>) => void;
}) {
  return (
    <fieldset className={styles.boxes}>
      <legend className={styles.legend}>{legend}</legend>
      {PERMISSIONS.map((permission) => {
        const held = grantable.has(permission);
        return (
          <label
            key={permission}
            className={`${styles.box} ${held ? '' : styles.unavailable}`}
            title={
              held
                ? describePermission(permission)
                : `You don't hold ${permission} yourself, so you cannot grant or take it away`
            }
          >
            <input
              type="checkbox"
              aria-label={`${who}: ${permission}`}
              checked={chosen.has(permission)}
              disabled={disabled || !held}
              onChange={(event) => {
                const next = new Set(chosen);
                if (event.target.checked) next.add(permission);
                else next.delete(permission);
                onChange(next);
              }}
            />
            <span className={styles.boxText}>
              <code>{permission}</code>
              <span className={styles.boxHint}>{describePermission(permission)}</span>
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}
