// The service version is the package's (src/version.ts): the image library reads it too, so it lives above the server.
export { SERVICE_VERSION } from '../version';
