/**
 * What the storage is given by the local host that builds it: where background work reports and
 * who owns a server's files. The types its callers see (entries, opened files, what a pack leaves
 * out) are the port's (src/host/host.ts).
 */
/** Where work done in the background reports what it did and what went wrong: the logger. */
export interface StorageLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** A user and group to own files, by number. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}
