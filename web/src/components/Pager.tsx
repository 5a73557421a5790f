import styles from './Pager.module.css';

/** How many pages `total` items fill at `size` a page (at least one, the empty one). */
export const pageCount = (total: number, size: number): number =>
  Math.max(1, Math.ceil(total / size));

/**
 * Newer and Older for a list shown newest first, a page at a time (pages from 1); shown only when
 * there is more than one page.
 */
export function Pager({
  label,
  page,
  total,
  size,
  onPage,
}: {
  /** The navigation's accessible name, e.g. "Audit log pages". */
  label: string;
  page: number;
  total: number;
  size: number;
  onPage: (page: number) => void;
}) {
  const pages = pageCount(total, size);
  if (pages <= 1 && page <= 1) return null;
  return (
    <nav aria-label={label} className={styles.pager}>
      <button
        type="button"
        className="button secondary"
        disabled={page <= 1}
        onClick={() => {
          onPage(Math.min(page - 1, pages));
        }}
      >
        Newer
      </button>
      <span className={styles.where}>
        Page {page} of {pages}
      </span>
      <button
        type="button"
        className="button secondary"
        disabled={page >= pages}
        onClick={() => {
          onPage(page + 1);
        }}
      >
        Older
      </button>
    </nav>
  );
}
