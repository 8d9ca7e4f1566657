// The closed lists the service checks a declaration's values against, as shipped with this package
// (the embedded server's formats, the model's enumerations; an install profile's accounts are the
// model's checker's): `validate` checks them offline, with no network call, so that a file it accepts
// is not refused by plan or apply for one of these values. plan and apply check the model's lists the
// same way (one check, before any request); the image formats they ask of the service, whose list may be longer.
import { distribution, installProfile } from '../model/resources';
import { TARGET_FORMATS } from '../imaging';
import { nearMiss } from './platform-keys';

export interface Vocabulary {
  /** What the values are, for the message: `distribution names`. */
  readonly noun: string;
  readonly values: readonly string[];
  /** Compared without case, as the codec compares an enumeration (a keyboard); otherwise exactly (a FIQL lookup). */
  readonly caseless?: boolean;
}

/** Lists longer than this are not printed whole in a message: the near miss, if any, is named. */
const LISTED = 12;

export const VOCABULARIES = {
  osName: { noun: 'distribution names', values: distribution.fields.name.values },
  arch: { noun: 'architectures', values: distribution.fields.arch.values },
  keyboard: { noun: 'keyboards', values: installProfile.fields.keyboard.values, caseless: true },
} as const satisfies Readonly<Record<string, Vocabulary>>;

/** The image formats the embedded server offers, by display name. */
export const SHIPPED_FORMATS: readonly string[] = TARGET_FORMATS.map((f) => f.name);

/** The problem with `value` in `v`, or undefined when it is one of its values. */
export function notIn(label: string, value: string, v: Vocabulary): string | undefined {
  const found = v.caseless ? v.values.some((x) => x.toLowerCase() === value.toLowerCase()) : v.values.includes(value);
  if (found) return undefined;
  const near = nearMiss(value, v.values);
  const hint = near ? `; did you mean "${near}"?` : '';
  const list = v.values.length <= LISTED ? ` (${v.values.join(', ')})` : '';
  return `${label} "${value}" is not one of the ${v.values.length} ${v.noun} the service knows${list}${hint}`;
}

/**
 * An image format the service does not offer (`offered`: its list, or SHIPPED_FORMATS offline). Display
 * names are matched exactly, as plan looks them up; a near miss or another case is named.
 */
export function unknownFormat(type: string, offered: readonly string[], by = 'the service'): string | undefined {
  if (offered.includes(type)) return undefined;
  const near = nearMiss(type, offered);
  return `unknown image format "${type}" (${by} offers: ${offered.join(', ')})${near ? `; did you mean "${near}"?` : ''}`;
}
