// Every secret the engine learns (the values of fields the model marks secret: passwords, secret
// keys) is kept here, so that each adapter masks the same set: the Action with `::add-mask::`, the
// command line and the logs by `mask()` (style example 4: one redaction used everywhere).

import { maskSecrets, MIN_SECRET_LENGTH } from '../model/redact';

export { MASK } from '../model/redact';

export class SecretSet {
  private readonly values = new Set<string>();

  /** Values shorter than MIN_SECRET_LENGTH are not masked: they would blank out ordinary text. */
  add(value: string | undefined): void {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH) this.values.add(value);
  }

  addAll(values: Iterable<string>): void {
    for (const v of values) this.add(v);
  }

  list(): string[] {
    return [...this.values];
  }

  /** Replaces every occurrence of every secret, longest first (a secret may contain another). */
  mask(text: string): string {
    return maskSecrets(text, this.values);
  }
}
