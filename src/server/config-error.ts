// A server that cannot start as configured (docs/server.md "Running a build farm"): a role without the
// database its queue needs, a second node over blobs on one node's disk, a secret key that is not the
// farm's. One line that names the setting to change; the command line exits 2 with it.
import { ForgeError } from '../errors';

export class ServerConfigError extends ForgeError {
  static readonly code = 'E_SERVER_CONFIG';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ServerConfigError';
  }
}
