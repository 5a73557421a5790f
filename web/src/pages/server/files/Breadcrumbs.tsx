import { Link } from 'react-router';
import { breadcrumbs, filesUrl } from './paths';
import styles from './Files.module.css';

/** Where the folder or file is: the root ("Files"), each folder, then the last name as text. */
export function Breadcrumbs({ server, path }: { server: string; path: string }) {
  const crumbs = breadcrumbs(path);
  return (
    <nav aria-label="Breadcrumbs">
      <ol className={styles.crumbs}>
        {crumbs.map((crumb, index) => (
          <li key={crumb.path}>
            {index === crumbs.length - 1 ? (
              <span aria-current="page" className={styles.current}>
                {crumb.name}
              </span>
            ) : (
              <Link to={filesUrl(server, crumb.path)}>{crumb.name}</Link>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}
