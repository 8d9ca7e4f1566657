// The install profile at the API: every bad value is a 400 naming its field, schema
// fields the build cannot honour are refused (from the model's `refused` flag), passwords are stored
// only as sha512-crypt hashes (checked against `openssl passwd -6`) and never appear in a response
// or in what the server keeps (its database and blobs), and the documents written validate against uforge.xsd.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installProfile, osGroup, osUser } from '../../src/model/resources';
import type { AnyModel, Fields } from '../../src/model/schema';
import { systemSettingsOf, hostnameOf } from '../../src/server/install/system-settings';
import { startTestServer, validatesAgainstXsd, type TestServer } from './helpers';

const JSON_H = { 'content-type': 'application/json', accept: 'application/json' };
const XML_H = { 'content-type': 'application/xml', accept: 'application/xml' };
const ROOT_PW = 'Root-pässword-7f3b';
const USER_PW = 'alice-user-secret-91c2';

// Made with `ssh-keygen -t ed25519 -N '' -C ops@example` (a throwaway key).
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBAjHcadxSAIn+AIpma30X1CSlAv74soCe35BgYG9dCa ops@example';
// An RSA blob whose inner type says ssh-ed25519: base64 well formed, type mismatch.
const MISMATCH = 'ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIBAjHcadxSAIn+AIpma30X1CSlAv74soCe35BgYG9dCa';

/** Every file under a directory, as bytes. */
const msg = (text: string): string => (JSON.parse(text) as { uforgeError: { localizedErrorMsg: { message: string } } }).uforgeError.localizedErrorMsg.message;

const opensslSha512 = (salt: string, plain: string): string =>
  execFileSync('openssl', ['passwd', '-6', '-salt', salt, '-stdin'], { input: plain }).toString().trim();

describe('install profile at the API', () => {
  let t: TestServer;
  let aid = 0;
  const send = (method: string, rel: string, body: unknown) => t.raw(method, rel, { headers: JSON_H, body: JSON.stringify(body) });

  beforeAll(async () => {
    t = await startTestServer({ limits: { maxDiskMiB: 8192 } });
    const r = await send('POST', 'users/alice/appliances', { appliance: { name: 'Web Front 01', version: '1', distributionUri: 'distributions/1' } });
    expect(r.status).toBe(201);
    aid = JSON.parse(r.text).appliance.dbId;
    const p = await t.raw('POST', `users/alice/appliances/${aid}/osprofile`, {
      headers: XML_H,
      body: '<linuxProfile><name>Minimal</name><standardProfileUri>distributions/1/profiles/1</standardProfileUri></linuxProfile>',
    });
    expect(p.status).toBe(201);
  });
  afterAll(async () => t.close());

  const user = (o: Record<string, unknown> = {}) => ({ name: 'alice', ...o });
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['diskSize below the minimum', { diskSize: 1023 }, /installProfile\.diskSize .*1024 to 8192/],
    ['diskSize above the server limit', { diskSize: 8193 }, /installProfile\.diskSize .*the server's limit/],
    ['diskSize 2^31', { diskSize: 2 ** 31 }, /installProfile\.diskSize/],
    ['memorySize 0', { memorySize: 0 }, /installProfile\.memorySize/],
    ['swapSize negative', { swapSize: -1 }, /installProfile\.swapSize/],
    ['swapSize leaves no room', { diskSize: 2048, swapSize: 1500 }, /installProfile\.swapSize .*from 0 to 1024/],
    ['timezone unknown', { timezone: 'Mars/Olympus' }, /installProfile\.timezone "Mars\/Olympus" is not an IANA/],
    ['keyboard not in the table', { keyboard: 'ro-cedilla' }, /installProfile\.keyboard/],
    ['kernelParameters with ;', { kernelParameters: 'quiet; reboot' }, /installProfile\.kernelParameters word "quiet;"/],
    ['kernelParameters with $', { kernelParameters: 'a=$x' }, /installProfile\.kernelParameters/],
    ['kernelParameters with a quote', { kernelParameters: 'a="b"' }, /installProfile\.kernelParameters/],
    ['kernelParameters with a newline', { kernelParameters: 'quiet\ninit=/bin/sh' }, /installProfile\.kernelParameters/],
    ['kernelParameters with a backslash', { kernelParameters: 'a=\\b' }, /installProfile\.kernelParameters/],
    ['kernelParameters root=', { kernelParameters: 'root=/dev/sdb1' }, /installProfile\.kernelParameters may not set root=/],
    ['welcomeMsg too long', { welcomeMsg: 'x'.repeat(4097) }, /installProfile\.welcomeMsg/],
    ['welcomeMsg escape', { welcomeMsg: 'hi\u001b[2J' }, /installProfile\.welcomeMsg/],
    ['user without name', { users: { user: [{ fullName: 'A' }] } }, /installProfile\.users\[0\]\.name is required/],
    ['user name upper case', { users: { user: [user({ name: 'Alice' })] } }, /installProfile\.users\[0\]\.name "Alice" is not a valid Debian account name/],
    ['user name too long', { users: { user: [user({ name: 'a'.repeat(33) })] } }, /installProfile\.users\[0\]\.name/],
    ['user name a system account', { users: { user: [user({ name: 'daemon' })] } }, /installProfile\.users\[0\]\.name "daemon" is an account the image already has/],
    ['user twice', { users: { user: [user(), user()] } }, /installProfile\.users\[1\]\.name "alice" is declared twice/],
    ['userId not a number', { users: { user: [user({ userId: '10x0' })] } }, /installProfile\.users\[0\]\.userId must be a number from 1000 to 59999/],
    ['userId in the system range', { users: { user: [user({ userId: '500' })] } }, /installProfile\.users\[0\]\.userId/],
    ['system userId out of range', { users: { user: [user({ userId: '1500', systemUser: true })] } }, /installProfile\.users\[0\]\.userId must be a number from 100 to 999/],
    ['userId twice', { users: { user: [user({ userId: '2000' }), user({ name: 'bob', userId: '2000' })] } }, /installProfile\.users\[1\]\.userId 2000 is used/],
    ['homeDir relative', { users: { user: [user({ homeDir: 'home/alice' })] } }, /installProfile\.users\[0\]\.homeDir/],
    ['homeDir with ..', { users: { user: [user({ homeDir: '/home/../etc' })] } }, /installProfile\.users\[0\]\.homeDir/],
    ['shell with a space', { users: { user: [user({ shell: '/bin/sh -c x' })] } }, /installProfile\.users\[0\]\.shell/],
    ['fullName with a colon', { users: { user: [user({ fullName: 'a:b' })] } }, /installProfile\.users\[0\]\.fullName/],
    ['primaryGroup unknown', { users: { user: [user({ primaryGroup: 'nosuch' })] } }, /installProfile\.users\[0\]\.primaryGroup "nosuch" is neither/],
    ['secondary group unknown', { users: { user: [user({ secondaryGroups: 'sudo,nosuch' })] } }, /installProfile\.users\[0\]\.secondaryGroups "nosuch"/],
    ['ssh key not a key', { users: { user: [user({ sshKeys: { sshKey: [{ publicKey: 'hello' }] } })] } }, /installProfile\.users\[0\]\.sshKeys\[0\]\.publicKey must be one OpenSSH public key line/],
    ['ssh key type mismatch', { rootUser: { sshKeys: { sshKey: [{ publicKey: MISMATCH }] } } }, /installProfile\.rootUser\.sshKeys\[0\]\.publicKey/],
    ['ssh key two lines', { rootUser: { sshKeys: { sshKey: [{ publicKey: `${ED25519}\n${ED25519}` }] } } }, /installProfile\.rootUser\.sshKeys\[0\]\.publicKey/],
    ['encrypted password not a hash', { rootUser: { password: 'plain', encrypted: true } }, /installProfile\.rootUser\.password must be a crypt\(3\) hash/],
    ['encrypted without password', { rootUser: { encrypted: true } }, /installProfile\.rootUser\.password is required/],
    ['root with a shell', { rootUser: { shell: '/bin/zsh' } }, /installProfile\.rootUser\.shell does not apply to root/],
    ['root named otherwise', { rootUser: { name: 'admin' } }, /installProfile\.rootUser\.name must be root/],
    ['password and disablePasswordLogin', { users: { user: [user({ password: 'x', disablePasswordLogin: true })] } }, /installProfile\.users\[0\]\.disablePasswordLogin contradicts/],
    ['group name standard', { groups: { group: [{ name: 'sudo' }] } }, /installProfile\.groups\[0\]\.name "sudo" is a group the image already has/],
    // Debian 13's `clock` (not in Debian 12): taken whatever the release, and no user's group unless declared (it cannot be).
    ['group name of one release', { groups: { group: [{ name: 'clock' }] } }, /installProfile\.groups\[0\]\.name "clock" is a group the image already has/],
    ['secondary group of one release', { users: { user: [user({ secondaryGroups: 'clock' })] } }, /installProfile\.users\[0\]\.secondaryGroups "clock" is neither/],
    ['group twice', { groups: { group: [{ name: 'ops' }, { name: 'ops' }] } }, /installProfile\.groups\[1\]\.name "ops" is declared twice/],
    ['groupId out of range', { groups: { group: [{ name: 'ops', groupId: '70000' }] } }, /installProfile\.groups\[0\]\.groupId must be a number from 1000 to 59999/],
    ['system groupId out of range', { groups: { group: [{ name: 'ops', groupId: '1000', systemGroup: true }] } }, /installProfile\.groups\[0\]\.groupId must be a number from 100 to 999/],
    ['groupId twice', { groups: { group: [{ name: 'a', groupId: '3000' }, { name: 'b', groupId: '3000' }] } }, /installProfile\.groups\[1\]\.groupId 3000 is used/],
  ];

  it.each(bad)('%s: 400 naming the field, on create, update and generation', async (_label, profile, message) => {
    const create = await send('POST', 'users/alice/appliances', { appliance: { name: `bad-${_label}`, version: '1', distributionUri: 'distributions/1', installProfile: profile } });
    expect(create.status).toBe(400);
    expect(msg(create.text)).toMatch(message);
    const update = await send('PUT', `users/alice/appliances/${aid}`, { appliance: { installProfile: profile } });
    expect(update.status).toBe(400);
    expect(msg(update.text)).toMatch(message);
    const gen = await send('POST', `users/alice/appliances/${aid}/images`, { image: { targetFormat: { name: 'QCOW2' }, installProfile: profile } });
    expect(gen.status).toBe(400);
    expect(msg(gen.text)).toMatch(message);
  });

  /** Every field the model refuses, at any depth, as the XML a platform client would send. */
  function refusedFields(m: AnyModel, wrap: (inner: string) => string, at: string): Array<[string, string]> {
    return Object.entries(m.fields as Fields).flatMap(([name, f]) => (f.unsupported ? [[`${at}.${name}`, wrap(`<${name}>true</${name}>`)] as [string, string]] : []));
  }
  const refused = [
    ...refusedFields(installProfile, (x) => x, 'installProfile'),
    ...refusedFields(osUser, (x) => `<rootUser>${x}</rootUser>`, 'installProfile.rootUser'),
    ...refusedFields(osUser, (x) => `<users><user><name>bob</name>${x}</user></users>`, 'installProfile.users[0]'),
    ...refusedFields(osGroup, (x) => `<groups><group><name>ops</name>${x}</group></groups>`, 'installProfile.groups[0]'),
  ];

  it('schema fields the build cannot honour are a 400 naming the field (from the model), never dropped', async () => {
    expect(refused.map(([p]) => p)).toEqual(expect.arrayContaining(['installProfile.partitionTable', 'installProfile.nics', 'installProfile.activationKey', 'installProfile.seLinuxMode', 'installProfile.vagrantUser', 'installProfile.runSysprep', 'installProfile.hwType', 'installProfile.rootUser.passwordAuto']));
    for (const [path, inner] of refused) {
      const xml = `<ns0:appliance xmlns:ns0="http://www.usharesoft.com/uforge"><installProfile>${inner}</installProfile></ns0:appliance>`;
      const r = await t.raw('PUT', `users/alice/appliances/${aid}`, { headers: XML_H, body: xml });
      expect(r.status, path).toBe(400);
      expect(r.text, path).toContain(`appliance.${path}: not supported by this service`);
    }
    // JSON too, and a complex element (partitionTable holds children in the schema).
    const j = await send('PUT', `users/alice/appliances/${aid}`, { appliance: { installProfile: { partitionTable: { disks: {} } } } });
    expect(j.status).toBe(400);
    expect(j.text).toContain('appliance.installProfile.partitionTable: not supported by this service');
  });

  const full = {
    diskSize: 4096,
    swapSize: 512,
    timezone: 'Europe/Paris',
    keyboard: 'fr-latin9',
    kernelParameters: 'quiet  net.ifnames=0',
    groups: { group: [{ name: 'ops', groupId: '2001' }, { name: 'svc', systemGroup: true, groupId: '901' }] },
    rootUser: { password: ROOT_PW, disablePasswordLogin: false, sshKeys: { sshKey: [{ name: 'ops', publicKey: ED25519 }] } },
    users: { user: [
      { name: 'alice', fullName: 'Alice Doe', userId: '1500', primaryGroup: 'ops', secondaryGroups: 'sudo, svc', homeDir: '/home/alice', shell: '/bin/bash', password: USER_PW, sshKeys: { sshKey: [{ publicKey: ED25519 }] } },
      { name: 'backupd', systemUser: true, userId: '950', disablePasswordLogin: true },
    ] },
    welcomeMsg: 'Welcome to web\n',
  };

  it('stores passwords only as sha512-crypt hashes and never answers them (XML and JSON, appliance and image)', async () => {
    const r = await send('PUT', `users/alice/appliances/${aid}`, { appliance: { installProfile: full } });
    expect(r.status).toBe(200);
    const shown = JSON.parse(r.text).appliance.installProfile;
    expect(shown.rootUser).toEqual({ disablePasswordLogin: false, encrypted: true, sshKeys: { sshKey: [{ name: 'ops', publicKey: ED25519 }] } });
    expect(shown.users.user[0]).toMatchObject({ name: 'alice', encrypted: true, secondaryGroups: 'sudo,svc', userId: '1500' });
    expect(shown.users.user[0].password).toBeUndefined();
    expect(shown.kernelParameters).toBe('quiet net.ifnames=0');

    const gen = await send('POST', `users/alice/appliances/${aid}/images`, { image: { targetFormat: { name: 'QCOW2' }, installProfile: { swapSize: 256 } } });
    expect(gen.status).toBe(201);
    const image = JSON.parse(gen.text).image;
    expect(image.installProfile).toMatchObject({ diskSize: 4096, swapSize: 256, timezone: 'Europe/Paris', rootUser: { encrypted: true } });
    const texts = [r.text, gen.text];
    for (const accept of ['application/json', 'application/xml']) {
      texts.push((await t.raw('GET', `users/alice/appliances/${aid}`, { headers: { accept } })).text);
      texts.push((await t.raw('GET', `users/alice/appliances/${aid}/images/${image.dbId}`, { headers: { accept } })).text);
      texts.push((await t.raw('GET', `users/alice/appliances/${aid}/images`, { headers: { accept } })).text);
    }
    for (const text of texts) {
      expect(text).not.toContain(ROOT_PW);
      expect(text).not.toContain(USER_PW);
      expect(text).not.toMatch(/\$6\$/);
    }
    const xml = (await t.raw('GET', `users/alice/appliances/${aid}`, { headers: { accept: 'application/xml' } })).text;
    expect(xml).toContain('<rootUser><disablePasswordLogin>false</disablePasswordLogin><encrypted>true</encrypted>');
    expect(validatesAgainstXsd(xml)).toBe(true);
    expect(validatesAgainstXsd((await t.raw('GET', `users/alice/appliances/${aid}/images/${image.dbId}`, { headers: { accept: 'application/xml' } })).text)).toBe(true);
    await t.raw('DELETE', `users/alice/appliances/${aid}/images/${image.dbId}`);

    // What the server keeps (the SQLite file and WAL, or the farm's database and queue; the blobs) holds hashes, never the plain passwords.
    const all = (await t.stored.bytes()).toString('latin1');
    expect(all).not.toContain(ROOT_PW);
    expect(all).not.toContain(Buffer.from(ROOT_PW).toString('latin1'));
    expect(all).not.toContain(USER_PW);
    const hashes = [...new Set(all.match(/\$6\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}/g) ?? [])];
    expect(hashes.length).toBeGreaterThanOrEqual(2);
    const match = (plain: string) => hashes.some((h) => opensslSha512(h.split('$')[2]!, plain) === h);
    expect(match(ROOT_PW)).toBe(true);
    expect(match(USER_PW)).toBe(true);
  });

  it('an account sent without password keeps its hash; an empty password removes it; an openssl hash is taken as is', async () => {
    const before = (await t.stored.bytes()).toString('latin1');
    const rootHash = before.match(/\$6\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}/g)!.find((h) => opensslSha512(h.split('$')[2]!, ROOT_PW) === h)!;
    const keep = await send('PUT', `users/alice/appliances/${aid}`, { appliance: { installProfile: { ...full, rootUser: { encrypted: true }, users: { user: [{ name: 'alice', userId: '1500' }] } } } });
    expect(keep.status).toBe(200);
    expect(JSON.parse(keep.text).appliance.installProfile.rootUser).toEqual({ encrypted: true });
    const docText = async () => (await t.stored.recordDoc('appliance', aid)) ?? '';
    expect(await docText()).toContain(rootHash);
    const given = opensslSha512('saltsalt', 'from-openssl');
    const set = await send('PUT', `users/alice/appliances/${aid}`, { appliance: { installProfile: { rootUser: { password: given, encrypted: true }, users: { user: [{ name: 'alice', password: '' }] } } } });
    expect(set.status).toBe(200);
    expect(await docText()).toContain(given);
    expect(await docText()).not.toContain(rootHash);
    expect(JSON.parse(set.text).appliance.installProfile.users.user[0]).toEqual({ name: 'alice' });
  });

  it('a plain password is salted from the template and account, not at random: two servers store the same hash', async () => {
    // The salt computed apart from the server (Python's hashlib), the hash by openssl.
    const saltOf = (name: string, version: string, account: string): string => execFileSync('python3', ['-c',
      'import hashlib,sys;a="./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";'
      + 'd=hashlib.sha256(("appliance-forge password salt\\0%s\\0%s\\0%s" % tuple(sys.argv[1:4])).encode()).digest();'
      + 'print("".join(a[b & 63] for b in d[:16]))', name, version, account], { encoding: 'utf8' }).trim();
    const other = await startTestServer({ limits: { maxDiskMiB: 8192 } });
    try {
      const stored: string[] = [];
      for (const [server, name] of [[t, 'Salted'], [other, 'Salted'], [t, 'Salted 2']] as const) {
        const r = await server.raw('POST', 'users/alice/appliances', { headers: JSON_H, body: JSON.stringify({ appliance: { name, version: '3', distributionUri: 'distributions/1', installProfile: { rootUser: { password: ROOT_PW } } } }) });
        expect(r.status).toBe(201);
        const doc = (await server.stored.recordDoc('appliance', JSON.parse(r.text).appliance.dbId as number)) ?? '';
        stored.push(/\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}/.exec(doc)![0]);
      }
      expect(stored[0]).toBe(opensslSha512(saltOf('Salted', '3', 'root'), ROOT_PW));
      expect(stored[1]).toBe(stored[0]);
      expect(stored[2]).toBe(opensslSha512(saltOf('Salted 2', '3', 'root'), ROOT_PW));
      expect(stored[2]).not.toBe(stored[0]);
    } finally {
      await other.close();
    }
  });

  it('a Windows template is refused at generation with a 400', async () => {
    const r = await send('POST', 'users/alice/appliances', { appliance: { name: 'win', version: '1', distributionUri: 'distributions/2' } });
    const wid = JSON.parse(r.text).appliance.dbId;
    const p = await t.raw('POST', `users/alice/appliances/${wid}/osprofile`, { headers: XML_H, body: '<windowsProfile><name>Standard</name><standardProfileUri>distributions/2/profiles/3</standardProfileUri></windowsProfile>' });
    expect(p.status).toBe(201);
    const gen = await send('POST', `users/alice/appliances/${wid}/images`, { image: { targetFormat: { name: 'QCOW2' } } });
    expect(gen.status).toBe(400);
    expect(gen.text).toMatch(/Windows template cannot be generated/);
  });
});

describe('systemSettingsOf', () => {
  it('maps a stored profile with defaults, the keyboard table and a hostname from the template name', () => {
    expect(systemSettingsOf('Web Front_01 (prod)')).toEqual({
      hostname: 'web-front-01-prod', diskMiB: 2048, swapMiB: 0, timezone: 'Etc/UTC', kernelParams: [],
      rootUser: { disablePasswordLogin: false, sshKeys: [] }, users: [], groups: [],
    });
    expect(hostnameOf('——')).toBe('appliance');
    expect(hostnameOf('x'.repeat(80))).toHaveLength(63);
    const s = systemSettingsOf('web', {
      diskSize: 4096, swapSize: 512, timezone: 'Europe/Paris', keyboard: 'fr-ch', kernelParameters: 'quiet net.ifnames=0',
      rootUser: { password: '$6$h', encrypted: true, disablePasswordLogin: true, sshKeys: [{ publicKey: ED25519 }] },
      users: [{ name: 'alice', userId: '1500', secondaryGroups: 'sudo,ops', password: '$6$u', encrypted: true }, { name: 'svc', systemUser: true }],
      groups: [{ name: 'ops', groupId: '2001' }, { name: 'sys', systemGroup: true }],
      welcomeMsg: 'hi',
    });
    expect(s).toEqual({
      hostname: 'web', diskMiB: 4096, swapMiB: 512, timezone: 'Europe/Paris', keyboard: { layout: 'ch', variant: 'fr' },
      kernelParams: ['quiet', 'net.ifnames=0'],
      rootUser: { passwordHash: '$6$h', disablePasswordLogin: true, sshKeys: [{ publicKey: ED25519 }] },
      users: [
        { name: 'alice', secondaryGroups: ['sudo', 'ops'], passwordHash: '$6$u', sshKeys: [], uid: 1500 },
        { name: 'svc', secondaryGroups: [], sshKeys: [], system: true },
      ],
      groups: [{ name: 'ops', gid: 2001, system: false }, { name: 'sys', system: true }],
      welcomeMessage: 'hi',
    });
  });
});
