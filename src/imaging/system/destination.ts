// Where a software file goes inside the image, and with which mode. A destination is checked, never
// cleaned up: anything that could leave the filesystem root or name something other than one plain
// file is refused (same rule as upload file names, wire contract §9 "Decision").
import { ImagingError } from '../errors';
import { RIGHTS_PATTERN } from '../../model/field-rules';
import { hasControl } from '../../model/text-rules';

/** ext4 limit on one name (bytes), and a sane bound on a whole path. */
const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 4096;

/**
 * The segments of a destination such as `/opt/app/bin/tool` (a relative `opt/app` means the same,
 * from the image root). Refused: empty, `.`/`..` or empty segments, a trailing `/`, backslashes,
 * NUL and other control characters, names longer than ext4 allows, and `lost+found` at the root
 * (mke2fs makes that directory itself).
 */
export function destinationSegments(destination: string): string[] {
  const refuse = (why: string): never => {
    throw new ImagingError('input', `refused destination ${JSON.stringify(destination)}: ${why}`);
  };
  if (typeof destination !== 'string' || destination === '') refuse('it is empty');
  if (Buffer.byteLength(destination) > MAX_PATH_BYTES) refuse(`it is longer than ${MAX_PATH_BYTES} bytes`);
  if (hasControl(destination)) refuse('it contains a control character');
  if (destination.includes('\\')) refuse('it contains a backslash');
  const segments = (destination.startsWith('/') ? destination.slice(1) : destination).split('/');
  for (const s of segments) {
    if (s === '') refuse('it has an empty segment or ends with "/"');
    if (s === '.' || s === '..') refuse(`"${s}" segments are not allowed`);
    if (Buffer.byteLength(s) > MAX_NAME_BYTES) refuse(`a name is longer than ${MAX_NAME_BYTES} bytes`);
  }
  if (segments[0] === 'lost+found') refuse('/lost+found belongs to the filesystem');
  return segments;
}

/** Default mode of a software file without `rights`. */
export const DEFAULT_FILE_MODE = 0o644;

/** `"0755"`, `"755"` or `"4755"` → the mode bits; anything else is refused. */
export function parseRights(rights: string | undefined, destination: string): number {
  if (rights === undefined || rights === '') return DEFAULT_FILE_MODE;
  if (!RIGHTS_PATTERN.test(rights)) {
    throw new ImagingError('input', `refused rights ${JSON.stringify(rights)} for ${destination}: expected an octal mode such as "0755"`);
  }
  return parseInt(rights, 8);
}
