// What a first boot needs from the tree, with and without cloud-init (not a boot: the files applySystem
// leaves): cloud-init's datasources and growpart/resize_rootfs for the OpenStack formats, no machine id,
// no ssh host keys (made at the first start of sshd, or by cloud-init), no resolver of the build host,
// and no update left for the first boot's ConditionNeedsUpdate= units.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { currentSandbox, hostId } from '../../src/host/sandbox';
import { buildHostOf } from '../../src/imaging/build-host';
import { applySystem } from '../../src/imaging';
import { CLOUD_CONFIG, UPDATE_STAMPS } from '../../src/imaging/system/apply';
import { fakeOs, fakeTree, tempDir } from './tools';

const tmp = tempDir('cloud');
afterAll(() => tmp.cleanup());
const sandbox = currentSandbox();
const host = buildHostOf(sandbox);

/** The fake OS tree with what a real layer brings that the first boot must not inherit. */
function layer(name: string): string {
  mkdirSync(join(tmp.path, name));
  const tree = fakeTree(join(tmp.path, name));
  for (const d of ['usr/sbin', 'etc/ssh', 'var/lib/dbus']) mkdirSync(join(tree, d), { recursive: true });
  writeFileSync(join(tree, 'usr/sbin/sshd'), '');
  for (const k of ['ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'ssh_host_rsa_key']) writeFileSync(join(tree, 'etc/ssh', k), 'key of the layer\n');
  writeFileSync(join(tree, 'etc/ssh/sshd_config'), 'Include /etc/ssh/sshd_config.d/*.conf\n');
  writeFileSync(join(tree, 'etc/machine-id'), '0123456789abcdef0123456789abcdef\n');
  writeFileSync(join(tree, 'var/lib/dbus/machine-id'), '0123456789abcdef0123456789abcdef\n');
  writeFileSync(join(tree, 'etc/resolv.conf'), 'nameserver 10.0.2.3\n');
  execFileSync('chown', ['-R', `${hostId(sandbox, 0, 'uid')}:${hostId(sandbox, 0, 'gid')}`, tree]);
  return tree;
}

async function applied(name: string, cloudInit: boolean): Promise<string> {
  const tree = layer(name);
  await applySystem(tree, { settings: fakeOs(tree).settings, files: [], manifest: '{}', cloudInit, host });
  return tree;
}

describe.skipIf(sandbox.kind === 'userns' && sandbox.self)('a first boot of its own', () => {
  it('with cloud-init: OpenStack datasources first, the root grows to the disk, keys made on the machine', async () => {
    const tree = await applied('cloud', true);
    const cfg = parse(readFileSync(join(tree, CLOUD_CONFIG), 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      datasource_list: ['ConfigDrive', 'OpenStack', 'NoCloud', 'None'],
      growpart: { mode: 'auto', devices: ['/'] },
      resize_rootfs: true,
      ssh_deletekeys: true,
    });
    expect(existsSync(join(tree, 'etc/network/interfaces.d/eth0'))).toBe(false);
    expectNothingOfTheBuild(tree);
  });

  it('the first boot has no update to redo: /etc and /var stamped as new as /usr, as systemd-update-done does', async () => {
    const tree = layer('stamps');
    // A layer's /usr is older than the image build; systemd compares the stamps' mtime against it.
    const usrTime = new Date('2024-05-01T12:34:56.789Z');
    utimesSync(join(tree, 'usr'), usrTime, usrTime);
    await applySystem(tree, { settings: fakeOs(tree).settings, files: [], manifest: '{}', cloudInit: false, host });
    const usr = statSync(join(tree, 'usr'), { bigint: true });
    for (const stamp of UPDATE_STAMPS) {
      expect(statSync(join(tree, stamp), { bigint: true }).mtimeNs).toBe(usr.mtimeNs);
      expect(readFileSync(join(tree, stamp), 'utf8')).toMatch(/^#/);
    }
    expect(Number(usr.mtimeMs)).toBe(usrTime.getTime());
  });

  it('without cloud-init: DHCP on eth0 by ifupdown, no cloud settings, the same clean state', async () => {
    const tree = await applied('plain', false);
    expect(existsSync(join(tree, CLOUD_CONFIG))).toBe(false);
    expect(readFileSync(join(tree, 'etc/network/interfaces.d/eth0'), 'utf8')).toContain('iface eth0 inet dhcp');
    expectNothingOfTheBuild(tree);
  });
});

function expectNothingOfTheBuild(tree: string): void {
  expect(statSync(join(tree, 'etc/machine-id')).size).toBe(0);
  expect(existsSync(join(tree, 'var/lib/dbus/machine-id'))).toBe(false);
  expect(existsSync(join(tree, 'etc/resolv.conf'))).toBe(false);
  expect(execFileSync('ls', [join(tree, 'etc/ssh')], { encoding: 'utf8' }).split('\n').filter((f) => f.startsWith('ssh_host_'))).toEqual([]);
  // sshd makes its keys before it starts, whoever boots the image.
  expect(readFileSync(join(tree, 'etc/systemd/system/ssh.service.d/host-keys.conf'), 'utf8')).toMatch(/^ExecStartPre=\/usr\/bin\/ssh-keygen -A$/m);
}
