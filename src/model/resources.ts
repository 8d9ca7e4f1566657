// Every resource of the interface in scope, in the field order of `uforge.xsd` (release 3.8.13).
// Only the fields this project reads or writes are listed; they keep the schema's relative order,
// so every document written from them validates (test/model/schema-drift.test.ts checks both).
import { KEYBOARDS } from './keyboards';
import { bool, date, int, list, long, model, namesOf, obj, oneOf, refused, str, uri, uris, type Infer, type InferFields } from './schema';

/** UForgeObject: the base of almost every type (wire contract §2). */
const base = { created: date(), dbId: long(), digest: str(), lastModified: date() } as const;
/** UForgeUploadObject: records that carry a file. */
const upload = {
  ...base,
  md5sum: str(),
  mimeType: str(),
  sha256sum: str(),
  size: long(),
  status: obj(() => opStatus),
  uploaded: bool(),
  uploadedTime: date(),
} as const;

/** The cloud platforms (uforge.xsd lists them twice: TargetPlatform `type` and TargetFormat `credAccountType`). */
const PLATFORM_KEYS = [
  'aws', 'outscale', 'azure', 'google', 'cloudstack', 'openstack',
  'vclouddirector', 'vsphere', 'k5', 'docker', 'oracle', 'openshift',
] as const;

export const opStatus = model({
  root: 'status',
  xsdType: 'OpStatus',
  fields: {
    ...base,
    bytesLoaded: long(),
    bytesTotal: long(),
    cancelled: bool(),
    complete: bool(),
    detailedError: bool(),
    detailedErrorMsg: str(),
    error: bool(),
    errorMessage: str(),
    eta: date(),
    message: str(),
    parentUri: uri(),
    percentage: int(),
    published: bool(),
    totalTime: date(),
    uri: uri(),
  },
});

export const localizedMessage = model({
  root: 'localizedErrorMsg',
  xsdType: 'LocalizedMessage',
  fields: { message: str(), messageId: str() },
});

export const uforgeError = model({
  root: 'uforgeError',
  xsdType: 'UForgeError',
  fields: {
    localizedErrorMsg: obj(() => localizedMessage),
    requestMethod: str(),
    requestUri: str(),
    statusCode: int(),
    timestamp: date(),
  },
});

export const serviceStatus = model({
  root: 'serviceStatus',
  xsdType: 'ServiceStatus',
  fields: { ...base, alive: bool(), version: str(), serviceLoad: int() },
});

export const org = model({
  root: 'org',
  xsdType: 'Org',
  fields: { ...base, activateNewUsers: bool(), defaultOrg: bool(), name: str(), uri: uri() },
});

export const user = model({
  root: 'user',
  xsdType: 'User',
  fields: {
    ...base,
    loginName: str(),
    active: bool(),
    email: str(),
    firstName: str(),
    surname: str(),
    admin: bool(),
    baseApiKeysUri: uri(),
    baseAppliancesUri: uri(),
    baseCredAccountsUri: uri(),
    baseTargetFormatsUri: uri(),
    baseImagesUri: uri(),
    baseMySoftwareLibraryUri: uri(),
    basePublishImagesUri: uri(),
    name: str(),
    orgUris: uris(),
    password: str({ secret: true }),
    uri: uri(),
  },
});

export const apiKeyPair = model({
  root: 'apiKeyPair',
  xsdType: 'APIKeyPair',
  fields: {
    ...base,
    name: str(),
    description: str(),
    publicKey: str(),
    // Returned once, in the answer to its creation; never by a GET (docs/cli-guide.md "Server and key management").
    secretKey: str({ secret: true }),
    uri: uri(),
  },
});

export const targetPlatform = model({
  root: 'targetPlatform',
  xsdType: 'TargetPlatform',
  fields: { ...base, name: str(), type: oneOf(PLATFORM_KEYS), uri: uri() },
});

/** The fields an OpenStack account adds to a credAccount (wire contract §9), in schema order. */
export const openStackAccountFields = {
  /** e.g. `http://glance:9292`; default: from the Keystone catalog. */
  glanceUrl: str(),
  /** e.g. `http://keystone:5000/v3` (with or without the version segment). */
  keystoneUrl: str(),
  login: str(),
  /** Write-only on the service; a secret wherever it is kept. */
  password: str({ secret: true }),
  /** `v3` (the default) is the only one supported. */
  keystoneVersion: str(),
} as const;

export const credAccount = model({
  root: 'credAccount',
  xsdType: 'CredAccount',
  abstract: true,
  fields: {
    ...base,
    name: str(),
    parentUri: uri(),
    uri: uri(),
    targetPlatform: obj(() => targetPlatform),
    secretsMissing: bool(),
  },
  kinds: { CredAccountOpenStack: openStackAccountFields },
});

/** What an OpenStack account is, for every reader of one: the engine, the provider, the Action's masks. */
export const OPENSTACK_ACCOUNT_FIELDS = namesOf(openStackAccountFields);
export type OpenStackAccountFields = InferFields<typeof openStackAccountFields>;

// Install profile: what a generated Debian image is set up with. Schema fields the image
// build cannot honour are `refused`: a document carrying one is a 400 naming it, never a silent drop.
const NOT_ASKED = 'an image is built unattended; nothing is asked at first boot';

export const sshKey = model({
  root: 'sshKey',
  xsdType: 'SSHKey',
  fields: { ...base, name: str(), publicKey: str() },
});

export const osUser = model({
  root: 'osUser',
  xsdType: 'OSUser',
  fields: {
    ...base,
    disablePasswordLogin: bool(),
    /** `password` already is a crypt(3) hash. The server stores only hashes and answers `encrypted: true`. */
    encrypted: bool(),
    fullName: str(),
    homeDir: str(),
    name: str(),
    password: str({ secret: true }),
    passwordAuto: refused('no generated passwords: give password or sshKeys'),
    primaryGroup: str(),
    primaryGroupAuto: refused(NOT_ASKED),
    /** Comma-separated group names (uforge.xsd). */
    secondaryGroups: str(),
    shell: str(),
    sshKeys: list('sshKey', () => sshKey),
    sudo: refused('give the user the secondary group sudo instead'),
    systemUser: bool(),
    userId: str(),
    userIdAuto: refused('leave userId out for an automatic id'),
  },
});

export const osGroup = model({
  root: 'osGroup',
  xsdType: 'OSGroup',
  fields: {
    ...base,
    groupId: str(),
    groupIdAuto: refused('leave groupId out for an automatic id'),
    name: str(),
    sudo: refused('give members the secondary group sudo instead'),
    systemGroup: bool(),
    password: refused('group passwords are not set'),
    encrypted: refused('group passwords are not set'),
  },
});

export const installProfile = model({
  root: 'installProfile',
  xsdType: 'InstallProfile',
  fields: {
    ...base,
    activationKey: refused('Windows images are not built'),
    diskSize: long(),
    firewallAuto: refused('no firewall is configured'),
    firewallEnabled: refused('no firewall is configured'),
    groups: list('group', () => osGroup),
    hwType: refused('the virtual hardware is the hypervisor\'s choice'),
    internetSettingsAuto: refused(NOT_ASKED),
    kernelParameters: str(),
    keyboard: oneOf(KEYBOARDS),
    keyboardAuto: refused(NOT_ASKED),
    memorySize: long(),
    nics: refused('network interfaces are configured by DHCP (cloud-init on cloud formats)'),
    partitionAuto: refused('the disk has one root partition; set diskSize and swapSize'),
    partitionTable: refused('the disk has one root partition; set diskSize and swapSize'),
    rootUser: obj(() => osUser),
    runSysprep: refused('Windows images are not built'),
    skipLicenses: refused(NOT_ASKED),
    swapSize: long(),
    timezone: str(),
    timezoneAuto: refused(NOT_ASKED),
    timezoneCity: refused('give timezone as an IANA name'),
    updateTools: refused('no hypervisor tools are installed'),
    uri: uri(),
    users: list('user', () => osUser),
    vagrantUser: refused('Vagrant boxes are not built'),
    welcomeMsg: str(),
    seLinuxMode: refused('Debian images have no SELinux'),
  },
});

export const targetFormat = model({
  root: 'targetFormat',
  xsdType: 'TargetFormat',
  fields: {
    ...base,
    name: str(),
    type: oneOf(['cloud', 'virtual', 'container', 'physical']),
    credAccountType: oneOf(PLATFORM_KEYS),
    imageInfos: str(),
    access: bool(),
    active: bool(),
    uri: uri(),
  },
});

export const distribProfile = model({
  root: 'distribProfile',
  xsdType: 'DistribProfile',
  abstract: true,
  fields: {
    ...base,
    active: bool(),
    applianceUri: uri(),
    arch: str(),
    description: str(),
    distributionUri: uri(),
    installedSize: long(),
    name: str(),
    standardProfileUri: uri(),
    uri: uri(),
    size: long(),
    version: str(),
  },
  kinds: {
    LinuxProfile: { packagesUri: uri(), packageUris: uris() },
    WindowsProfile: {
      edition: oneOf(['DATACENTER', 'STANDARD', 'ENTERPRISE', 'WEBSERVER', 'UNKNOWN']),
      type: oneOf(['FULL', 'CORE', 'UNKNOWN']),
      language: str(),
    },
  },
});

export const distribution = model({
  root: 'distribution',
  xsdType: 'Distribution',
  fields: {
    ...base,
    active: bool(),
    arch: oneOf(['i386', 'i586', 'i686', 'noarch', 'x86_64']),
    basePkgsUri: uri(),
    baseProfilesUri: uri(),
    description: str(),
    family: oneOf(['linux', 'unix', 'windows']),
    lastPkgBuildDate: date(),
    name: oneOf([
      'CentOS', 'Debian', 'Fedora Core', 'OpenSUSE', 'Oracle Linux', 'RedHat Enterprise Linux',
      'Scientific Linux', 'SUSE Linux Enterprise Server', 'Ubuntu', 'Windows',
    ]),
    pkgType: str(),
    profileUris: uris(),
    releaseDate: date(),
    uri: uri(),
    version: str(),
    visible: bool(),
  },
});

export const pkg = model({
  root: 'package',
  xsdType: 'Pkg',
  fields: {
    ...upload,
    arch: str(),
    fullName: str(),
    name: str(),
    pkgBuildDate: date(),
    release: str(),
    repositoryName: str(),
    uri: uri(),
    version: str(),
    epoch: int(),
  },
});

/** The package change set and package list (`PkgList`): `packages{addedPkgUris, deletedPkgUris, pkgs/pkg}`. */
export const packages = model({
  root: 'packages',
  xsdType: 'PkgList',
  fields: { addedPkgUris: uris(), deletedPkgUris: uris(), pkgs: list('pkg', () => pkg) },
});

/** One level of `subSoftwareArtifacts` (same element and type, without further nesting). */
export const softwareArtifactNode = model({
  root: 'softwareArtifact',
  xsdType: 'SoftwareArtifact',
  fields: { ...base, uri: uri(), name: str(), fullName: str(), origName: str() },
});

export const softwareArtifact = model({
  root: 'softwareArtifact',
  xsdType: 'SoftwareArtifact',
  fields: {
    ...upload,
    uri: uri(),
    binaryUri: uri(),
    parentUri: uri(),
    installLocation: str(),
    name: str(),
    fullName: str(),
    origName: str(),
    type: str(),
    version: str(),
    subSoftwareArtifacts: list('softwareArtifact', () => softwareArtifactNode),
  },
  kinds: { SoftwareFile: { ownerGroup: str(), rights: str() } },
});

export const mySoftware = model({
  root: 'mySoftware',
  xsdType: 'MySoftware',
  fields: {
    ...base,
    tag: str(),
    name: str(),
    version: str(),
    description: str(),
    size: long(),
    revision: long(),
    artifactsUri: uri(),
    uri: uri(),
    softwareArtifactUris: uris(),
    applianceUris: uris(),
  },
});

export const appliance = model({
  root: 'appliance',
  xsdType: 'Appliance',
  fields: {
    ...base,
    uuid: str(),
    archName: str(),
    baseImagesUri: uri(),
    baseMySoftwareUri: uri(),
    baseOsProfileUri: uri(),
    basePublishImagesUri: uri(),
    description: str(),
    distributionName: str(),
    distributionUri: uri(),
    imageUris: uris(),
    installProfile: obj(() => installProfile),
    lastPkgUpdate: date(),
    mySoftwareList: list('mySoftware', () => mySoftware),
    name: str(),
    orgUri: uri(),
    osProfileUri: uri(),
    revision: int(),
    size: long(),
    tag: str(),
    uri: uri(),
    version: str(),
  },
});

const imageFields = {
  ...upload,
  parentUri: uri(),
  compress: bool(),
  credAccount: obj(() => credAccount),
  distributionName: str(),
  downloadUri: uri(),
  fileExtension: str(),
  fileName: str(),
  fileSize: long(),
  targetFormat: obj(() => targetFormat),
  imageCreated: bool(),
  installProfile: obj(() => installProfile),
  name: str(),
  revision: int(),
  statusUri: uri(),
  uri: uri(),
  version: str(),
} as const;

export const image = model({ root: 'image', xsdType: 'Image', fields: imageFields });

export const publishImage = model({
  root: 'publishImage',
  xsdType: 'PublishImage',
  abstract: true,
  fields: { ...imageFields, cloudId: str(), imageUri: uri() },
  kinds: {
    PublishImageOpenStack: {
      keystoneDomain: str(),
      keystoneProject: str(),
      displayName: str(),
      publicImage: bool(),
    },
  },
});

// ---- List documents: `<ns0:X><total/><X><item/>…</X></ns0:X>` (wire contract §2) ---------------

export const appliances = model({
  root: 'appliances', xsdType: 'Appliances',
  fields: { total: long(), appliances: list('appliance', () => appliance) },
});
export const distributions = model({
  root: 'distributions', xsdType: 'Distributions',
  fields: { total: long(), distributions: list('distribution', () => distribution) },
});
export const distribProfiles = model({
  root: 'distribProfiles', xsdType: 'DistribProfiles',
  fields: { total: long(), distribProfiles: list('distribProfile', () => distribProfile) },
});
export const credAccounts = model({
  root: 'credAccounts', xsdType: 'CredAccounts',
  fields: { total: long(), credAccounts: list('credAccount', () => credAccount) },
});
export const mySoftwareList = model({
  root: 'mySoftwareList', xsdType: 'MySoftwareList',
  fields: { total: long(), mySoftwareList: list('mySoftware', () => mySoftware) },
});
export const softwareArtifacts = model({
  root: 'softwareArtifacts', xsdType: 'SoftwareArtifacts',
  fields: { total: long(), softwareArtifacts: list('softwareArtifact', () => softwareArtifact) },
});
export const images = model({
  root: 'images', xsdType: 'Images',
  fields: { total: long(), images: list('image', () => image) },
});
export const publishImages = model({
  root: 'publishImages', xsdType: 'PublishImages',
  fields: { total: long(), publishImages: list('publishImage', () => publishImage) },
});
export const statuses = model({
  root: 'statuses', xsdType: 'OpStatuses',
  fields: { total: long(), statuses: list('status', () => opStatus) },
});
export const targetFormats = model({
  root: 'targetFormats', xsdType: 'TargetFormats',
  fields: { total: long(), targetFormats: list('targetFormat', () => targetFormat) },
});
export const apiKeyPairs = model({
  root: 'apiKeyPairs', xsdType: 'APIKeyPairs',
  fields: { total: long(), apiKeyPairs: list('apiKeyPair', () => apiKeyPair) },
});
export const orgs = model({
  root: 'orgs', xsdType: 'Orgs',
  fields: { total: long(), orgs: list('org', () => org) },
});

/** Every document root the interface exchanges, by root element name. */
export const documents = {
  user, credAccount, credAccounts, appliance, appliances, distribution, distributions,
  distribProfile, distribProfiles, package: pkg, packages, mySoftware, mySoftwareList,
  softwareArtifact, softwareArtifacts, image, images, installProfile, targetFormat, targetFormats,
  publishImage, publishImages, status: opStatus, statuses, serviceStatus, apiKeyPair, apiKeyPairs,
  org, orgs, uforgeError,
} as const;

export type DocumentRoot = keyof typeof documents;

/**
 * Root elements that name a concrete kind of a polymorphic document (wire contract §2):
 * `linuxProfile` is a `distribProfile` of kind `LinuxProfile`, `softwareFile` a `softwareArtifact` of kind `SoftwareFile`.
 */
export const rootAliases: Readonly<Record<string, { root: DocumentRoot; kind: string }>> = {
  linuxProfile: { root: 'distribProfile', kind: 'LinuxProfile' },
  windowsProfile: { root: 'distribProfile', kind: 'WindowsProfile' },
  softwareFile: { root: 'softwareArtifact', kind: 'SoftwareFile' },
};

// Each record's type by name, inferred from its model (the one source): an interface, so that an editor's
// hover and a compiler message say `Appliance`, not the fields of the mapped type it extends.
/* eslint-disable @typescript-eslint/no-empty-object-type -- each interface is its model's inferred type, named */
export interface User extends Infer<typeof user> {}
export interface CredAccount extends Infer<typeof credAccount> {}
export interface CredAccounts extends Infer<typeof credAccounts> {}
export interface Appliance extends Infer<typeof appliance> {}
export interface Appliances extends Infer<typeof appliances> {}
export interface Distribution extends Infer<typeof distribution> {}
export interface Distributions extends Infer<typeof distributions> {}
export interface DistribProfile extends Infer<typeof distribProfile> {}
export interface DistribProfiles extends Infer<typeof distribProfiles> {}
export interface Pkg extends Infer<typeof pkg> {}
export interface Packages extends Infer<typeof packages> {}
export interface MySoftware extends Infer<typeof mySoftware> {}
export interface MySoftwareList extends Infer<typeof mySoftwareList> {}
export interface SoftwareArtifact extends Infer<typeof softwareArtifact> {}
export interface SoftwareArtifacts extends Infer<typeof softwareArtifacts> {}
export interface Image extends Infer<typeof image> {}
export interface Images extends Infer<typeof images> {}
export interface InstallProfile extends Infer<typeof installProfile> {}
export interface OsUser extends Infer<typeof osUser> {}
export interface OsGroup extends Infer<typeof osGroup> {}
export interface SshKeyRecord extends Infer<typeof sshKey> {}
export interface TargetFormat extends Infer<typeof targetFormat> {}
export interface TargetFormats extends Infer<typeof targetFormats> {}
export interface PublishImage extends Infer<typeof publishImage> {}
export interface PublishImages extends Infer<typeof publishImages> {}
export interface OpStatus extends Infer<typeof opStatus> {}
export interface Statuses extends Infer<typeof statuses> {}
export interface ServiceStatus extends Infer<typeof serviceStatus> {}
export interface ApiKeyPair extends Infer<typeof apiKeyPair> {}
export interface ApiKeyPairs extends Infer<typeof apiKeyPairs> {}
export interface Org extends Infer<typeof org> {}
export interface Orgs extends Infer<typeof orgs> {}
export interface UForgeError extends Infer<typeof uforgeError> {}
/* eslint-enable @typescript-eslint/no-empty-object-type */

declare module './schema' {
  interface NamedModels {
    user: readonly [typeof user, User]; credAccount: readonly [typeof credAccount, CredAccount]; appliance: readonly [typeof appliance, Appliance];
    distribution: readonly [typeof distribution, Distribution]; distribProfile: readonly [typeof distribProfile, DistribProfile]; pkg: readonly [typeof pkg, Pkg];
    mySoftware: readonly [typeof mySoftware, MySoftware]; softwareArtifact: readonly [typeof softwareArtifact, SoftwareArtifact]; image: readonly [typeof image, Image];
    installProfile: readonly [typeof installProfile, InstallProfile]; osUser: readonly [typeof osUser, OsUser]; osGroup: readonly [typeof osGroup, OsGroup];
    sshKey: readonly [typeof sshKey, SshKeyRecord]; targetFormat: readonly [typeof targetFormat, TargetFormat]; publishImage: readonly [typeof publishImage, PublishImage];
    opStatus: readonly [typeof opStatus, OpStatus]; serviceStatus: readonly [typeof serviceStatus, ServiceStatus]; apiKeyPair: readonly [typeof apiKeyPair, ApiKeyPair];
    org: readonly [typeof org, Org]; uforgeError: readonly [typeof uforgeError, UForgeError];
  }
}

/** The named type of each document root (DocumentOf). */
export interface DocumentTypes {
  user: User;
  credAccount: CredAccount;
  credAccounts: CredAccounts;
  appliance: Appliance;
  appliances: Appliances;
  distribution: Distribution;
  distributions: Distributions;
  distribProfile: DistribProfile;
  distribProfiles: DistribProfiles;
  package: Pkg;
  packages: Packages;
  mySoftware: MySoftware;
  mySoftwareList: MySoftwareList;
  softwareArtifact: SoftwareArtifact;
  softwareArtifacts: SoftwareArtifacts;
  image: Image;
  images: Images;
  installProfile: InstallProfile;
  targetFormat: TargetFormat;
  targetFormats: TargetFormats;
  publishImage: PublishImage;
  publishImages: PublishImages;
  status: OpStatus;
  statuses: Statuses;
  serviceStatus: ServiceStatus;
  apiKeyPair: ApiKeyPair;
  apiKeyPairs: ApiKeyPairs;
  org: Org;
  orgs: Orgs;
  uforgeError: UForgeError;
}

/** The TypeScript type of a document, by its root element name: its named interface (`DocumentOf<'appliance'>` is `Appliance`). */
export type DocumentOf<R extends DocumentRoot> = DocumentTypes[R];

// Every root has its named type, the named type is the model's, and there is no other (checked by the
// compiler alone: nothing of it is left in the JavaScript).
// (Every field is optional, so two records' types are assignable each way whatever they hold: the fields are compared too.)
type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;
type AllTrue<T extends Record<DocumentRoot | keyof DocumentTypes, true>> = T;
/** A compile-time check of DocumentTypes against the models (no value). */
export type NamedDocumentsCheck = AllTrue<{
  [R in DocumentRoot | keyof DocumentTypes]: R extends DocumentRoot ? Same<DocumentTypes[R], Infer<(typeof documents)[R]>> : false;
}>;
