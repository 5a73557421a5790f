/** Archives crafted byte by byte for tests: whatever names and entry types a test wants. */
import assert from 'node:assert/strict';
import { Header, type HeaderData } from 'tar';

export interface TarEntry extends HeaderData {
  body?: Buffer;
}

/** A tar archive written header by header, with whatever types and names a test wants. */
export function tarOf(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { body, ...data } of entries) {
    const header = new Header({
      mode: 0o644,
      mtime: new Date(0),
      size: body?.length ?? 0,
      ...data,
    });
    header.encode();
    assert.ok(header.block);
    blocks.push(header.block);
    if (body) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
