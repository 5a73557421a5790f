/**
 * File channels: a regular file opened by a remote files session (SFTP) to be read and written
 * at offsets (FileChannel, src/host/host.ts).
 *
 * A channel for reading reads the file itself. A channel for writing works on a private copy in
 * the file's own (resolved) folder under a temporary name (`folder.tempPrefix`, never listed nor
 * reachable by a user path): empty when truncated or new, else a copy of the file, cloned where
 * the file system can. `close` renames the copy over the file in one step (a new file is linked
 * instead, when it was opened exclusive, so a file that appeared meanwhile is never replaced), so
 * nobody ever sees a half-written file under its name; `abort`, or a close after a write that
 * failed, drops the copy and leaves the file as it was. Growth past the file's size at open is
 * claimed from the quota before each write reaches the disk (413 QUOTA_EXCEEDED, nothing
 * written), and booked when the copy takes the file's place.
 *
 * The rooms: read-channel.ts (reading, and what both channels share), write-channel.ts.
 */
import { AppError, notFound } from '../../../errors.js';
import { checkPaths } from '../guard.js';
import { shown } from '../tree.js';
import { alreadyExists, special } from './errors.js';
import type { ServerFolder } from './folder.js';
import { ReadChannel } from './read-channel.js';
import { openRegular, withPlace } from './resolve.js';
import { WriteChannel } from './write-channel.js';
import type { ChannelFlags, FileChannel, PathGuard } from '../../host.js';

/**
 * Opens the regular file at `segments` (following symlinks that stay inside) as `flags` say:
 * a folder is 400 NOT_A_FILE, a FIFO, socket or device 400 SPECIAL_FILE, an existing file with
 * `exclusive` 409, a missing one 404 unless `create` and `write` (a file is only made to be
 * written).
 */
export async function openChannel(
  folder: ServerFolder,
  segments: readonly string[],
  flags: ChannelFlags,
  quota: number | null,
  guard: PathGuard | null,
): Promise<FileChannel> {
  checkPaths(guard, [segments], false);
  return withPlace(folder, segments, true, async (place) => {
    if (place.name === null || place.stat?.isDirectory()) {
      throw new AppError('NOT_A_FILE', `${shown(place.segments)} is a folder`);
    }
    checkPaths(guard, [place.segments], false);
    if (place.stat && !place.stat.isFile()) throw special(place.segments);
    if (place.stat && flags.exclusive) throw alreadyExists(place.segments);
    if (!place.stat && !(flags.create && flags.write)) throw notFound(shown(place.segments));
    if (!flags.write) {
      return new ReadChannel(
        await openRegular(place.dir, place.name, place.segments),
        place.segments,
      );
    }
    return WriteChannel.open(folder, place, place.name, flags, quota);
  });
}
