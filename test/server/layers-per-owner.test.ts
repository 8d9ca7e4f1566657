// `serve --layers-per-owner` (StartOptions.layersPerOwner) on a real farm: the build orders an API node
// puts in the queue carry their owner as the OS layer's partition (so that no owner's build hits a layer
// another owner's build made), read back from pg-boss's own table; without the option they carry none.
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { createUser } from '../../src/server';
import { farmUnavailable, startFarm, type Farm } from '../support/farm';
import { sql } from '../support/postgres';

const skip = farmUnavailable();
if (skip) console.warn(`SKIP layers per owner: ${skip}`);

describe.skipIf(skip !== undefined)('OS layers per owner: the partition in the build order', () => {
  const farms: Farm[] = [];
  afterAll(async () => {
    for (const f of farms) await f.close();
  });

  /** The OS layer partitions of the orders alice and bob's generations put in the queue (no worker takes them). */
  async function partitions(layersPerOwner: boolean): Promise<Record<string, string | null>> {
    const farm = await startFarm({ workers: 0, api: { layersPerOwner } });
    farms.push(farm);
    for (const login of ['alice', 'bob']) {
      const key = await createUser(farm.apiDir, { login, databaseUrl: farm.databaseUrl, secretKeyFile: farm.secretKeyFile });
      const c = createClient({ url: farm.api.url, auth: key, retry: false });
      try {
        const app = await c.appliance_create({ uid: login, body: { name: 'same', version: '1', distributionUri: 'distributions/1' } });
        await c.applianceOSProfile_create({ uid: login, aid: app.dbId!, body: { kind: 'LinuxProfile', name: 'Minimal', standardProfileUri: 'distributions/1/profiles/1' } });
        await c.machineImage_generate({ uid: login, aid: app.dbId!, body: { targetFormat: { name: 'QCOW2' } } });
      } finally {
        await c.close();
      }
    }
    const rows = await sql<{ owner: string; partition: string | null }>(farm.databaseUrl, "SELECT data->>'owner' AS owner, data->'os'->>'partition' AS partition FROM pgboss.job WHERE data->>'kind' = 'build'");
    return Object.fromEntries(rows.map((r) => [r.owner, r.partition]));
  }

  it('carries the owner with the option, nothing without it', async () => {
    expect(await partitions(true)).toEqual({ alice: 'alice', bob: 'bob' });
    expect(await partitions(false)).toEqual({ alice: null, bob: null });
  }, 120_000);
});
