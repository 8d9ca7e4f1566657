// The debugfs request that writes software files into an image (src/imaging/disk/image-files.ts): whatever
// checked a name before, a path with a control character never reaches the request, so no user text
// starts a line of it (a line starting with `!` is a shell command to debugfs).
import { describe, expect, it } from 'vitest';
import { ImagingError } from '../../src/imaging';
import { imageFilesScript } from '../../src/imaging/disk/image-files';
import { currentBuildHost } from '../../src/imaging/build-host';

const file = (segments: string[]) => ({ segments, mode: 0o644, content: { text: 'x' }, owner: { uid: 0, gid: 0 } });
const script = (segments: string[]) =>
  imageFilesScript({ rawName: 'disk.raw', scratchDir: '/nonexistent', index: { opt: 'd' }, files: [file(segments)], host: currentBuildHost() });

describe('debugfs request of the software files', () => {
  it('quotes a plain name and refuses newline, carriage return and NUL in any segment', async () => {
    const ok = await script(['opt', 'a "b" c']);
    expect(ok.script).toContain('write "files/0" "a ""b"" c"');
    for (const bad of ['x\n!touch /tmp/pwned', 'x\r!id', 'x\0y']) {
      await expect(script(['opt', bad])).rejects.toBeInstanceOf(ImagingError);
      await expect(script([bad, 'f'])).rejects.toMatchObject({ kind: 'input' });
    }
  });
});
