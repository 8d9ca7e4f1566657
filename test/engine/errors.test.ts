// The engine's and the command line's errors are in the package's error tree: `isForgeError` tells them
// apart by class and narrows to them, and the caller's mistakes (usage, settings, variables, builder
// selections) are UsageErrors, which the one failure formatter turns into exit code 2.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { UsageError as CliUsageError } from '../../src/cli/command';
import { ApplyError, BuilderSelectionError, UsageError, VarsError } from '../../src/engine';
import { ConnectSettingsError } from '../../src/engine/connect';
import { describeFailure } from '../../src/engine/failure';
import { ForgeError, isForgeError } from '../../src/errors';

const plain = { mask: (t: string) => t };

describe('ApplyError and UsageError in the error tree', () => {
  it('carry their codes, and isForgeError tells them apart and narrows', () => {
    const apply: unknown = new ApplyError([{ what: 'image 0 (QCOW2)', error: new Error('disk full') }]);
    const usage: unknown = new UsageError('--port must be 0..65535, got 99999');
    expect(apply).toBeInstanceOf(ForgeError);
    expect(usage).toBeInstanceOf(ForgeError);
    expect([isForgeError(apply, ApplyError), isForgeError(apply, UsageError)]).toEqual([true, false]);
    expect([isForgeError(usage, UsageError), isForgeError(usage, ApplyError)]).toEqual([true, false]);
    if (isForgeError(apply, ApplyError)) {
      expectTypeOf(apply).toEqualTypeOf<ApplyError>();
      expect([apply.code, apply.failures.length]).toEqual(['E_APPLY', 1]);
    }
    expect((apply as ApplyError).message).toBe('apply failed:\n  image 0 (QCOW2): disk full');
    // The command line's UsageError is the engine's: one class, one code.
    expect(CliUsageError).toBe(UsageError);
  });

  it('the caller’s mistakes are UsageErrors with codes of their own, and exit 2', () => {
    const mistakes = [new ConnectSettingsError('no service URL'), new VarsError('--var x: not NAME=VALUE'), new BuilderSelectionError('--only vmdk: no such builder')];
    expect(mistakes.map((e) => e.code)).toEqual(['E_SETTINGS', 'E_VARS', 'E_BUILDER_SELECTION']);
    for (const e of mistakes) {
      expect(isForgeError(e, UsageError)).toBe(true);
      expect(describeFailure(e, plain).exitCode).toBe(2);
    }
    // A class below tells itself from its siblings, and the parent is none of them.
    expect(isForgeError(mistakes[0], VarsError)).toBe(false);
    expect(isForgeError(new UsageError('bad'), VarsError)).toBe(false);
    expect(describeFailure(new ApplyError([{ what: 'x', error: new Error('y') }]), plain).exitCode).toBe(1);
  });
});
