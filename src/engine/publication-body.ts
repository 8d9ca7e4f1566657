// The publishImage body of an OpenStack publication and its account (wire contract §9), one recipe for
// the engine and the provider: the same declaration gives the same request whichever tool sends it.
import type { CredAccount, OpenStackAccountFields, PublishImage } from '../model/resources';

/**
 * An OpenStack account as the tools hold one: the model's fields (`keystoneUrl` and `login` required;
 * `password` left out to use a stored account's own), its name (a stored account has one, an embedded
 * one may not) and a stored account's URI (the service then takes its fields and sealed password as the base).
 */
export type OpenStackAccountInput = Readonly<
  OpenStackAccountFields & Required<Pick<OpenStackAccountFields, 'keystoneUrl' | 'login'>> & Pick<CredAccount, 'name' | 'uri'>
>;

export interface PublicationInput {
  readonly imageUri: string;
  readonly account: OpenStackAccountInput;
  readonly keystoneDomain: string;
  readonly keystoneProject: string;
  readonly displayName: string;
  readonly publicImage: boolean;
}

/** The credAccount of an OpenStack account, stored (cloudAccount_create) or embedded in a publication. */
export function openStackAccountBody(a: OpenStackAccountInput): CredAccount {
  return {
    kind: 'CredAccountOpenStack',
    ...(a.uri ? { uri: a.uri } : {}),
    ...(a.name !== undefined ? { name: a.name } : {}),
    targetPlatform: { name: 'OpenStack', type: 'openstack' },
    keystoneUrl: a.keystoneUrl,
    ...(a.glanceUrl ? { glanceUrl: a.glanceUrl } : {}),
    login: a.login,
    ...(a.password !== undefined ? { password: a.password } : {}),
    keystoneVersion: a.keystoneVersion ?? 'v3',
  };
}

export function publishImageBody(p: PublicationInput): PublishImage {
  const { name: _name, ...account } = p.account;
  return {
    kind: 'PublishImageOpenStack',
    imageUri: p.imageUri,
    credAccount: openStackAccountBody(account),
    keystoneDomain: p.keystoneDomain,
    keystoneProject: p.keystoneProject,
    displayName: p.displayName,
    publicImage: p.publicImage,
  };
}
