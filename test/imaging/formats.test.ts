import { describe, expect, it } from 'vitest';
import { imageFileName, TARGET_FORMATS, targetFormatByName } from '../../src/imaging';

describe('TARGET_FORMATS', () => {
  it('lists the nine formats; only the OpenStack ones can be published', () => {
    expect(TARGET_FORMATS.map((f) => [f.name, f.type, f.credAccountType ?? null, f.disk, f.extension, f.glanceDiskFormat ?? null])).toEqual([
      ['OpenStack QCOW2', 'cloud', 'openstack', 'qcow2', 'qcow2', 'qcow2'],
      ['OpenStack VMDK', 'cloud', 'openstack', 'vmdk', 'vmdk', 'vmdk'],
      ['OpenStack VHD', 'cloud', 'openstack', 'vhd', 'vhd', 'vhd'],
      ['OpenStack VDI', 'cloud', 'openstack', 'vdi', 'vdi', 'vdi'],
      ['QCOW2', 'virtual', null, 'qcow2', 'qcow2', null],
      ['Raw Virtual Disk', 'virtual', null, 'raw', 'raw', null],
      ['VMware', 'virtual', null, 'vmdk', 'vmdk', null],
      ['VirtualBox', 'virtual', null, 'vdi', 'vdi', null],
      ['VHD', 'virtual', null, 'vhd', 'vhd', null],
    ]);
  });

  it('finds a format by display name, case-insensitively', () => {
    expect(targetFormatByName('openstack qcow2')?.name).toBe('OpenStack QCOW2');
    expect(targetFormatByName('Docker')).toBeUndefined();
  });

  it('names compressed files with .gz after the disk extension', () => {
    const vhd = targetFormatByName('VHD')!;
    expect(imageFileName('web-1', vhd, false)).toBe('web-1.vhd');
    expect(imageFileName('web-1', vhd, true)).toBe('web-1.vhd.gz');
  });
});
