// The root of the package's error tree. Each class carries its own stable `code` (a static of the class,
// copied onto its instances) and every instance a brand under global symbols, one for the tree and one
// per code of its class and the classes above it; `instanceof` reads that brand (`Symbol.hasInstance`),
// so an error made by a second copy of the package (the Action's bundle next to `dist/`, two installed
// versions) is still recognised, as undici's errors are (style example 5). This module imports nothing:
// each subclass lives with the code that throws it.

/** Every error of the tree carries it (the brand of 0.1.0, whose instances carry only this and `code`). */
const BRAND = Symbol.for('appliance-forge.error');
const brandOf = (code: string): symbol => Symbol.for(`appliance-forge.error.${code}`);

/** A class of the tree, for `isForgeError(e, Class)`. */
export type ForgeErrorClass<T extends ForgeError = ForgeError> = abstract new (...args: never[]) => T;

const ownCode = (c: object): string | undefined => {
  const code: unknown = Object.hasOwn(c, 'code') ? (c as { code: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
};

export abstract class ForgeError extends Error {
  /** The code of the class (its nearest own `static code`), stable across releases: docs/client.md lists them. */
  readonly code: string;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    const mark = (key: symbol): void => {
      Object.defineProperty(this, key, { value: true });
    };
    mark(BRAND);
    let code: string | undefined;
    for (let c: object = new.target; c !== ForgeError; c = Object.getPrototypeOf(c) as object) {
      const own = ownCode(c);
      if (own === undefined) continue;
      code ??= own;
      mark(brandOf(own));
    }
    if (code === undefined) throw new TypeError(`${new.target.name} has no static code: every class of the error tree has one`);
    this.code = code;
  }

  /**
   * `e instanceof ApiError` by the brand, not the prototype: true for an ApiError of any copy of the package.
   * A subclass without a code of its own (a user's) is tested by its prototype, as usual.
   */
  static override [Symbol.hasInstance]<T extends ForgeError>(this: ForgeErrorClass<T>, value: unknown): value is T {
    if (typeof value !== 'object' || value === null) return false;
    const marks = value as Record<symbol | 'code', unknown>;
    if (marks[BRAND] !== true) return false;
    if ((this as object) === ForgeError) return true;
    const code = ownCode(this);
    if (code === undefined) return Function.prototype[Symbol.hasInstance].call(this, value);
    return marks[brandOf(code)] === true || marks.code === code;
  }
}

/**
 * Whether `e` is an error of the tree, of any copy of the package; with a class, of that class (or one
 * below it), and `e` is narrowed to it: `isForgeError(e, ApiError) && e.status === 404`.
 */
export function isForgeError<T extends ForgeError = ForgeError>(e: unknown, cls?: ForgeErrorClass<T>): e is T {
  return e instanceof (cls ?? ForgeError);
}

/** The message of any thrown value (an `Error`'s message, anything else as a string), for wrapping and logs. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A document that does not decode: bad syntax, a DTD, a wrong type, an unknown `xsi:type`. */
export class DecodeError extends ForgeError {
  static readonly code = 'E_DECODE';
  constructor(
    message: string,
    /** Field path inside the document, e.g. `appliance.installProfile.diskSize`. */
    readonly path?: string,
  ) {
    super(path ? `${path}: ${message}` : message);
    this.name = 'DecodeError';
  }
}

/** A FIQL query that does not parse; `position` is the 0-based offset of the problem. */
export class FiqlError extends ForgeError {
  static readonly code = 'E_FIQL';
  constructor(message: string, readonly position: number) {
    super(`invalid query at position ${position}: ${message}`);
    this.name = 'FiqlError';
  }
}

export class AbortedError extends ForgeError {
  static readonly code = 'E_ABORTED';
  constructor(message = 'aborted') {
    super(message);
    this.name = 'AbortError';
  }
}
