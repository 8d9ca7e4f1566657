// The reference server's OpenStack publication backend (docs/contracts.md, OpenStack).
export { publishToGlance, deleteGlanceImage, getGlanceImage } from './publish';
export type { PublishRequest, PublishResult, PublishProgress, ImageRequest } from './publish';
export { OpenStackError } from './errors';
export type { OpenStackErrorKind, OpenStackErrorDetails } from './errors';
export type { OpenStackAccess } from './keystone';
export type { OpenStackTimeouts } from './http';
export { GLANCE_DISK_FORMATS } from './glance';
export type { GlanceDiskFormat, GlanceImage } from './glance';
export { keystoneBase, glanceBase } from './urls';
