// The declaration format as data (docs/design/declaration.md): each map's keys, the kind of each
// value, what is required, bounds, checks, defaults and a line of help. The parser reads through it
// (yaml-reader.ts takes known keys, required keys, minimums, checks and defaults from here, and the
// compiler holds parse.ts and installation.ts to reading each key as the kind it has here), and
// declaration-schema.ts turns it into the JSON Schema that editors use.
import { matching, RULES, type Rule } from '../model/field-rules';
import { openStackAccountFields, osUser } from '../model/resources';
import type { Fields } from '../model/schema';

/** A value test that is not a kind (a model rule): the message says "<field> must be <says>". */
export type Check = Rule;

export interface TextSpec {
  readonly kind: 'text';
  readonly doc: string;
  readonly required?: boolean;
  readonly default?: string;
  readonly check?: Check;
}
export interface IntSpec {
  readonly kind: 'int';
  readonly doc: string;
  readonly min: number;
}
export interface BoolSpec {
  readonly kind: 'bool';
  readonly doc: string;
  readonly default?: boolean;
}
export interface MapSpec<S extends Shape = Shape> {
  readonly kind: 'map';
  readonly doc: string;
  readonly shape: S;
  readonly required?: boolean;
  /** A map holding only this key names an entry declared elsewhere (`account: {name: …}`). */
  readonly refBy?: string;
}
export interface ListSpec {
  readonly kind: 'list';
  readonly doc: string;
  readonly item: FieldSpec;
  readonly required?: boolean;
  /** Said when the key is missing, after "<field> is required". */
  readonly hint?: string;
  readonly minItems?: number;
}
/** One of several forms (a package as a name or as a map; groups as text or a list). */
export interface EitherSpec {
  readonly kind: 'either';
  readonly doc: string;
  readonly of: readonly FieldSpec[];
}
/** Read for the platform tool's files' sake and not acted on: any value. */
export interface IgnoredSpec {
  readonly kind: 'ignored';
  readonly doc: string;
}
export type FieldSpec = TextSpec | IntSpec | BoolSpec | MapSpec | ListSpec | EitherSpec | IgnoredSpec;
export type Kind = FieldSpec['kind'];

export interface Shape<F extends Readonly<Record<string, FieldSpec>> = Readonly<Record<string, FieldSpec>>> {
  /** The name of its definition in the JSON Schema. */
  readonly name: string;
  readonly doc: string;
  readonly fields: F;
  /** Unknown keys are errors, for this reason (ignoring one would build another machine); otherwise warnings. */
  readonly closed?: string;
  /** A key that, when present, needs these keys too. */
  readonly needs?: Readonly<Partial<Record<keyof F & string, readonly (keyof F & string)[]>>>;
  /** The model fields its keys land in: the values of those the model marks secret are masked wherever they go. */
  readonly model?: Fields;
}

/** Keeps the literal types (kinds, `needs`), so that the compiler knows each key's kind. */
const shape = <const T extends Shape>(s: T): T => s;
const text = (doc: string, o: Omit<TextSpec, 'kind' | 'doc'> = {}): TextSpec => ({ kind: 'text', doc, ...o });
const int = (doc: string, min: number): IntSpec => ({ kind: 'int', doc, min });
const bool = (doc: string, o: Omit<BoolSpec, 'kind' | 'doc'> = {}): BoolSpec => ({ kind: 'bool', doc, ...o });
const map = <S extends Shape, const O extends Omit<MapSpec, 'kind' | 'shape' | 'doc'> = object>(s: S, o?: O): MapSpec<S> & O =>
  ({ kind: 'map', doc: s.doc, shape: s, ...o }) as MapSpec<S> & O;
const list = (doc: string, item: FieldSpec, o: Omit<ListSpec, 'kind' | 'doc' | 'item'> = {}): ListSpec => ({ kind: 'list', doc, item, ...o });
const ignored = (doc: string): IgnoredSpec => ({ kind: 'ignored', doc });

/** Every installation key changes the machine: one this service does not set is an error, never dropped. */
export const NOT_SET = `the image build does not set it (known: see docs/cli-guide.md "stack.installation")`;

export const SSH_KEY = shape({
  name: 'sshKey', doc: 'An SSH public key authorised for the account.', closed: NOT_SET,
  fields: { name: text('A label for the key.'), publicKey: text('The key, as in authorized_keys.', { required: true }) },
});
const sshKeys = list('SSH public keys authorised for the account.', map(SSH_KEY));

export const ROOT_USER = shape({
  name: 'rootUser', doc: "The root account's settings.", closed: NOT_SET, model: osUser.fields,
  fields: {
    password: text('Root password (a secret: masked in every output; write ${env:NAME}).'),
    disablePasswordLogin: bool('Refuse password logins for root.'),
    sshKeys,
  },
});

export const OS_USER = shape({
  name: 'osUser', doc: 'An account created in the image.', closed: NOT_SET, model: osUser.fields,
  fields: {
    name: text('Login name.', { required: true }),
    fullName: text('Full name (GECOS).'),
    userId: int('Numeric user id.', 0),
    primaryGroup: text('Primary group.'),
    secondaryGroups: { kind: 'either', doc: 'Supplementary groups: comma-separated text or a list.', of: [text('Comma-separated group names.'), list('Group names.', text('A group name.'))] },
    homeDir: text('Home folder.'),
    shell: text('Login shell.'),
    systemUser: bool('A system account (no home, low id).'),
    password: text('Password (a secret: masked in every output; write ${env:NAME}).'),
    disablePasswordLogin: bool('Refuse password logins.'),
    sshKeys,
  },
});

export const OS_GROUP = shape({
  name: 'osGroup', doc: 'A group created in the image.', closed: NOT_SET,
  fields: { name: text('Group name.', { required: true }), groupId: int('Numeric group id.', 0), systemGroup: bool('A system group.') },
});

export const INSTALLATION = shape({
  name: 'installation', doc: 'Install settings of the appliance: sizes in MB, locale, accounts.', closed: NOT_SET,
  fields: {
    diskSize: int("Disk size in MB (a builder's own installation.diskSize wins).", 1),
    swapSize: int('Swap size in MB.', 0),
    memorySize: int('Memory in MB.', 1),
    timezone: text('Time zone, e.g. Etc/UTC.'),
    keyboard: text('Keyboard layout, e.g. us.'),
    kernelParams: text('Kernel command-line words, space separated.'),
    rootUser: map(ROOT_USER),
    users: list('Accounts created in the image.', map(OS_USER)),
    groups: list('Groups created in the image.', map(OS_GROUP)),
    welcomeMessage: text('Login banner.'),
  },
});

export const PACKAGE = shape({
  name: 'package', doc: 'A Debian (or other OS) package to install.',
  fields: { name: text('Package name.', { required: true }), version: text('Version.'), release: text('Release.'), arch: text('Architecture.') },
});

export const OS = shape({
  name: 'os', doc: 'The operating system and its packages.',
  fields: {
    name: text('Distribution, e.g. Debian.', { required: true }),
    version: text("The distribution's version, e.g. 12.", { required: true }),
    arch: text('Architecture.', { default: 'x86_64' }),
    profile: text('OS profile, e.g. Minimal.', { default: 'Minimal' }),
    pkgs: list('Packages added to the profile: a name, or {name, version, release, arch}.', { kind: 'either', doc: 'A package.', of: [text('A package name.'), map(PACKAGE)] }),
    updateTo: ignored("The platform's update-to date: accepted, not used."),
  },
});

export const BUNDLE_FILE = shape({
  name: 'bundleFile', doc: 'A file of a software bundle.',
  fields: {
    name: text('Name in the image (default: the source file name).'),
    source: text('Path relative to the declaration file.', { required: true }),
    destination: text('Folder in the image.', { check: RULES.installLocation }),
    installLocation: text('The same as destination (an older name).', { check: RULES.installLocation }),
    rights: text('Octal mode, e.g. 0644.', { check: RULES.rights }),
    ownerGroup: text('Owner, or owner and group, e.g. root or root:adm.', { check: RULES.ownerGroup }),
  },
});

export const BUNDLE = shape({
  name: 'bundle', doc: 'A software component: files installed into the image.',
  fields: {
    name: text('Bundle name.', { required: true }),
    version: text('Bundle version.', { required: true }),
    description: text('Description.'),
    files: list('The files, at least one.', map(BUNDLE_FILE), { required: true, minItems: 1 }),
    license: ignored("The platform's licence entry: accepted, not used."),
  },
});

export const STACK = shape({
  name: 'stack', doc: 'The appliance: its OS, packages, install settings and software.',
  fields: {
    name: text('Appliance name.', { required: true }),
    version: text('Appliance version.', { required: true }),
    description: text('Description.'),
    os: map(OS, { required: true }),
    installation: map(INSTALLATION),
    bundles: list('Software bundles.', map(BUNDLE)),
  },
});

export const ACCOUNT = shape({
  name: 'account', doc: 'An OpenStack cloud account.', model: openStackAccountFields,
  fields: {
    type: text('OpenStack.', { required: true, check: matching(/^openstack$/i, 'OpenStack: only OpenStack accounts are supported') }),
    name: text('Account name.', { required: true }),
    glanceUrl: text('Glance endpoint (default: from the Keystone catalogue).', { check: RULES.httpUrl }),
    keystoneUrl: text('Keystone endpoint, e.g. https://keystone:5000/v3.', { required: true, check: RULES.httpUrl }),
    keystoneVersion: text('Identity API version.', { default: 'v3', check: matching(/^v3$/, 'v3') }),
    login: text('User name (write ${env:NAME}).', { required: true }),
    password: text('Password (a secret: masked in every output; write ${env:NAME}).', { required: true }),
  },
});

export const BUILDER_INSTALLATION = shape({
  name: 'builderInstallation', doc: "The image's own install settings.",
  closed: 'a builder sets only diskSize; the rest goes in stack.installation',
  fields: { diskSize: int('Disk size in MB.', 1) },
});

export const HARDWARE = shape({
  name: 'hardwareSettings', doc: "The image's hardware.",
  fields: { memory: int('Memory in MB.', 1), cpu: ignored('Accepted, not used.'), hwType: ignored('Accepted, not used.') },
});

export const BUILDER = shape({
  name: 'builder', doc: 'An image format to build, and where to publish it.',
  fields: {
    type: text('Target format display name, e.g. QCOW2, OpenStack QCOW2, VHD.', { required: true }),
    installation: map(BUILDER_INSTALLATION),
    hardwareSettings: map(HARDWARE),
    account: map(ACCOUNT, { refBy: 'name' }),
    displayName: text('Image name in Glance.'),
    keystoneDomain: text('Keystone domain.', { default: 'Default' }),
    keystoneProject: text('Keystone project.'),
    publicImage: bool('Publish the image as public.', { default: false }),
    compress: bool('Compress the image.', { default: false }),
  },
  needs: { account: ['displayName', 'keystoneProject'], displayName: ['account'], keystoneProject: ['account'], keystoneDomain: ['account'] },
});

export const DECLARATION = shape({
  name: 'declaration', doc: "An appliance, the images to build from it and where to publish them, in the platform tool's (hammr) format.",
  fields: {
    stack: map(STACK, { required: true }),
    builders: list('Image formats to build, at least one.', map(BUILDER), { required: true, hint: 'list at least one image format', minItems: 1 }),
    accounts: list('Cloud accounts that builders name.', map(ACCOUNT)),
  },
});

/** The keys of a map, in the order written above. */
export function keyNames<S extends Shape>(s: S): readonly (keyof S['fields'] & string)[] {
  return Object.keys(s.fields);
}
