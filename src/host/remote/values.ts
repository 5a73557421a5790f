/**
 * The values of the port (src/host/host.ts) as they cross the file agent's wire, and the checked
 * readers that take them back. Neither side believes the other: the agent reads each argument
 * before the storage sees it (a value that does not fit is a refused call), and the panel reads
 * each answer before a caller sees it (one that does not fit is a broken agent). Dates cross as
 * milliseconds, an unbounded ratio as null; a deny list crosses as its lines.
 */
import type {
  ArchiveLimits,
  AttributeChanges,
  ChannelFlags,
  Entry,
  EntryStat,
  EntryType,
  NamedStat,
} from '../host.js';

/** A value that does not fit what it should be; `what` names it, never its content. */
export class BadValue extends Error {
  constructor(what: string, should: string) {
    super(`${what} is not ${should}`);
    this.name = 'BadValue';
  }
}

export type Reader<T> = (value: unknown, what: string) => T;

/** The longest text that crosses as one value (a path segment, a name, a deny line). */
const MAX_TEXT = 8192;
/** The most segments a path has. */
const MAX_SEGMENTS = 1024;

export const text: Reader<string> = (value, what) => {
  if (typeof value !== 'string' || value.length > MAX_TEXT) throw new BadValue(what, 'a text');
  return value;
};

/** A whole number, 0 or more (bytes, offsets, handles). */
export const whole: Reader<number> = (value, what) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new BadValue(what, 'a whole number');
  }
  return value;
};

export const flag: Reader<boolean> = (value, what) => {
  if (typeof value !== 'boolean') throw new BadValue(what, 'true or false');
  return value;
};

/** A moment as milliseconds since 1970. */
export const date: Reader<Date> = (value, what) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new BadValue(what, 'a time');
  return new Date(value);
};

export const nullable =
  <T>(read: Reader<T>): Reader<T | null> =>
  (value, what) =>
    value === null ? null : read(value, what);

export const list =
  <T>(read: Reader<T>, most: number): Reader<T[]> =>
  (value, what) => {
    if (!Array.isArray(value) || value.length > most) {
      throw new BadValue(what, `a list of at most ${most}`);
    }
    return value.map((item: unknown, i) => read(item, `${what}[${i}]`));
  };

/** A path as segments (the storage decides what each may be). */
export const segments: Reader<string[]> = list(text, MAX_SEGMENTS);

/** The fields of an object, each read by its reader; nothing else is kept. */
function fields(value: unknown, what: string): Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadValue(what, 'an object');
  }
  return value as Record<string, unknown>;
}

const oneOf =
  <T extends string>(values: readonly T[]): Reader<T> =>
  (value, what) => {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      throw new BadValue(what, values.join(' or '));
    }
    return value as T;
  };

export const entryType: Reader<EntryType> = oneOf(['file', 'folder', 'symlink']);

export const channelFlags: Reader<ChannelFlags> = (value, what) => {
  const object = fields(value, what);
  return {
    read: flag(object.read, `${what}.read`),
    write: flag(object.write, `${what}.write`),
    append: flag(object.append, `${what}.append`),
    create: flag(object.create, `${what}.create`),
    truncate: flag(object.truncate, `${what}.truncate`),
    exclusive: flag(object.exclusive, `${what}.exclusive`),
  };
};

export const changesToWire = (changes: AttributeChanges): object => ({
  ...(changes.mode === undefined ? {} : { mode: changes.mode }),
  ...(changes.accessed === undefined ? {} : { accessed: changes.accessed.getTime() }),
  ...(changes.modified === undefined ? {} : { modified: changes.modified.getTime() }),
  ...(changes.size === undefined ? {} : { size: changes.size }),
});

/** What may be changed: the storage checks the values (a mode past 0o777 is its 403). */
export const attributeChanges: Reader<AttributeChanges> = (value, what) => {
  const object = fields(value, what);
  const number: Reader<number> = (item, name) => {
    if (typeof item !== 'number' || !Number.isFinite(item)) throw new BadValue(name, 'a number');
    return item;
  };
  return {
    ...(object.mode === undefined ? {} : { mode: number(object.mode, `${what}.mode`) }),
    ...(object.accessed === undefined
      ? {}
      : { accessed: date(object.accessed, `${what}.accessed`) }),
    ...(object.modified === undefined
      ? {}
      : { modified: date(object.modified, `${what}.modified`) }),
    ...(object.size === undefined ? {} : { size: number(object.size, `${what}.size`) }),
  };
};

export const limitsToWire = (limits: ArchiveLimits): object => ({
  maxBytes: limits.maxBytes,
  maxEntries: limits.maxEntries,
  maxRatio: Number.isFinite(limits.maxRatio) ? limits.maxRatio : null,
  ratioFloorBytes: limits.ratioFloorBytes,
});

export const archiveLimits: Reader<ArchiveLimits> = (value, what) => {
  const object = fields(value, what);
  const ratio = object.maxRatio;
  if (ratio !== null && (typeof ratio !== 'number' || !(ratio > 0))) {
    throw new BadValue(`${what}.maxRatio`, 'a positive number or null');
  }
  return {
    maxBytes: whole(object.maxBytes, `${what}.maxBytes`),
    maxEntries: whole(object.maxEntries, `${what}.maxEntries`),
    maxRatio: ratio ?? Number.POSITIVE_INFINITY,
    ratioFloorBytes: whole(object.ratioFloorBytes, `${what}.ratioFloorBytes`),
  };
};

export const entry: Reader<Entry> = (value, what) => {
  const object = fields(value, what);
  const modified = text(object.modified, `${what}.modified`);
  if (Number.isNaN(Date.parse(modified))) throw new BadValue(`${what}.modified`, 'a time');
  return {
    name: text(object.name, `${what}.name`),
    path: text(object.path, `${what}.path`),
    type: entryType(object.type, `${what}.type`),
    size: whole(object.size, `${what}.size`),
    modified,
  };
};

export const statToWire = (stat: EntryStat): object => ({
  type: stat.type,
  size: stat.size,
  mode: stat.mode,
  accessed: stat.accessed.getTime(),
  modified: stat.modified.getTime(),
});

export const entryStat: Reader<EntryStat> = (value, what) => {
  const object = fields(value, what);
  const mode = whole(object.mode, `${what}.mode`);
  if (mode > 0o7777) throw new BadValue(`${what}.mode`, 'permission bits');
  return {
    type: oneOf(['file', 'folder', 'symlink', 'other'] as const)(object.type, `${what}.type`),
    size: whole(object.size, `${what}.size`),
    mode,
    accessed: date(object.accessed, `${what}.accessed`),
    modified: date(object.modified, `${what}.modified`),
  };
};

export const namedStatToWire = (stat: NamedStat): object => ({
  name: stat.name,
  ...statToWire(stat),
});

export const namedStat: Reader<NamedStat> = (value, what) => ({
  name: text(fields(value, what).name, `${what}.name`),
  ...entryStat(value, what),
});
