// The shared folder beside the checkout (`../shared`): the interface's reference files and the
// loopback OpenStack scripts. CI clones the repository next to it, wherever that is.
import { join, resolve } from 'node:path';

export const SHARED = resolve(__dirname, '../../../shared');
export const XSD = join(SHARED, 'reference/uforge.xsd');
export const START_OPENSTACK = join(SHARED, 'openstack/start-openstack.sh');
