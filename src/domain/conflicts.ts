/**
 * What a repository reports when the database refused a write for the rules it keeps, so that
 * services decide what it means without knowing either database's error codes.
 */

/** A value that must be unique is taken (a username, a server name, an identity). */
export class AlreadyExists extends Error {
  constructor(options?: ErrorOptions) {
    super('A row with that unique value exists', options);
    this.name = 'AlreadyExists';
  }
}

/** A write names a row that no longer exists (a server deleted meanwhile). */
export class NoLongerExists extends Error {
  constructor(options?: ErrorOptions) {
    super('A row the write refers to no longer exists', options);
    this.name = 'NoLongerExists';
  }
}
