// A web appliance: one software component (two local files), Debian 13 with nginx and curl, a QCOW2 image,
// and the same appliance published to OpenStack Glance. Service credentials come from the stack
// configuration (`appliance-forge:user`, `:apiKey`, `:secretKey`); OpenStack's from this project's config.
import * as pulumi from '@pulumi/pulumi';
import { Appliance, MachineImage, Publication, Software } from 'appliance-forge/pulumi';

const config = new pulumi.Config();

const site = new Software('site', {
  name: 'forge-web-site',
  version: '1.0.0',
  description: 'static site and its start script',
  files: [
    { source: 'files/index.html', destination: '/srv/www', rights: '0644' },
    { source: 'files/serve.sh', destination: '/usr/local/bin', rights: '0755', ownerGroup: 'root:root' },
  ],
});

const web = new Appliance('web', {
  name: 'forge-web',
  version: '1.0.0',
  description: 'nginx with the forge-web site',
  distribution: { name: 'Debian', version: '13', arch: 'x86_64' },
  osProfile: 'Minimal',
  packages: ['nginx', 'curl'],
  software: [site],
});

// Follows the appliance's revision: any change to the appliance builds a new image.
const qcow2 = new MachineImage('web-qcow2', {
  appliance: web,
  format: 'QCOW2',
  compress: true,
  memorySize: 1024,
  diskSize: 4096,
});

const openstackImage = new MachineImage('web-openstack', {
  appliance: web,
  format: 'OpenStack QCOW2',
  diskSize: 4096,
});

const published = new Publication('web-glance', {
  image: openstackImage,
  account: {
    keystoneUrl: config.require('keystoneUrl'),
    glanceUrl: config.get('glanceUrl'),
    login: config.require('openstackLogin'),
    password: config.requireSecret('openstackPassword'),
  },
  keystoneDomain: config.get('keystoneDomain') ?? 'Default',
  keystoneProject: config.require('keystoneProject'),
  displayName: 'forge-web 1.0.0',
  publicImage: false,
});

export const applianceUri = web.uri;
export const applianceRevision = web.revision;
export const qcow2Sha256 = qcow2.sha256;
export const qcow2Download = qcow2.downloadUri;
export const glanceImageId = published.cloudId;
