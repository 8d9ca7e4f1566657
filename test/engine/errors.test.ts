// The engine's and the command line's errors are in the package's error tree: `isForgeError` finds them
// by code across copies of the package, and narrows to them.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command';
import { ApplyError } from '../../src/engine';
import { ForgeError, isForgeError } from '../../src/errors';

describe('ApplyError and UsageError in the error tree', () => {
  it('carry their codes, and isForgeError tells them apart', () => {
    const apply: unknown = new ApplyError([{ what: 'image 0 (QCOW2)', error: new Error('disk full') }]);
    const usage: unknown = new UsageError('--port must be 0..65535, got 99999');
    expect(apply).toBeInstanceOf(ForgeError);
    expect(usage).toBeInstanceOf(ForgeError);
    expect([isForgeError(apply, 'E_APPLY'), isForgeError(apply, 'E_USAGE')]).toEqual([true, false]);
    expect([isForgeError(usage, 'E_USAGE'), isForgeError(usage, 'E_APPLY')]).toEqual([true, false]);
    if (isForgeError(apply, 'E_APPLY')) expect(apply.code).toBe('E_APPLY');
    expect((apply as ApplyError).message).toBe('apply failed:\n  image 0 (QCOW2): disk full');
  });

  it('is recognised by its brand, not by instanceof (a second copy of the package)', () => {
    const copy = Object.assign(new Error('bad flag'), { code: 'E_USAGE', [Symbol.for('appliance-forge.error')]: true });
    expect(isForgeError(copy, 'E_USAGE')).toBe(true);
    expect(copy).not.toBeInstanceOf(UsageError);
  });
});
