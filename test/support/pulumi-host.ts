// Drives the REAL dynamic-provider host shipped in @pulumi/pulumi over gRPC, the way the Pulumi engine does
// (design/pulumi-and-action.md, "Testing without the CLI", item 3). No Pulumi CLI is involved: the test plays
// the engine's part, sending ResourceProvider RPCs with google-protobuf Structs.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { Struct, type JavaScriptValue } from 'google-protobuf/google/protobuf/struct_pb';
import * as provrpc from '@pulumi/pulumi/proto/provider_grpc_pb';
import * as provproto from '@pulumi/pulumi/proto/provider_pb';
import { startReferenceServer } from './reference-server';

export const REPO = resolve(__dirname, '../..');
export const HOST_SCRIPT = join(REPO, 'node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js');
/** The value the engine sends for an input that is not known yet (preview). */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

export type Props = Record<string, unknown>;
export interface CheckFailure { property: string; reason: string }
export interface DiffAnswer { changes: 'some' | 'none' | 'unknown'; replaces: string[]; deleteBeforeReplace: boolean }

/** Node's own require, so the provider and @pulumi/pulumi are loaded exactly as tsc emitted them (not via vite). */
export const nodeRequire = createRequire(join(REPO, 'package.json'));

/**
 * The compiled provider must be fresh: the serialized provider requires `appliance-forge/pulumi/runtime/v1`
 * from `dist/`, so a stale build would test old code.
 */
export function assertProviderBuilt(): void {
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? statSync(p).mtimeMs : 0);
    }, 0);
  const built = join(REPO, 'dist/provider/runtime/v1.js');
  let builtAt = 0;
  try { builtAt = statSync(built).mtimeMs; } catch { /* missing */ }
  if (builtAt < newest(join(REPO, 'provider'))) {
    throw new Error('dist/provider is missing or older than provider/: run `npx tsc -p tsconfig.json` first');
  }
}

export type Layout = 'npm' | 'pnpm';

/**
 * A throw-away Pulumi project folder in which `appliance-forge` resolves to this repository, laid out as npm
 * does (`node_modules/appliance-forge` → package) or as pnpm does (`node_modules/.pnpm/<name>@<v>/node_modules/<name>`
 * plus a top-level symlink to it). The host runs with this folder as its working directory, which is where
 * `require-from-string` resolves the provider's `require` calls from.
 */
export function makeProject(layout: Layout, name = 'forge-test'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `af-pulumi-${layout}-`));
  const nm = join(dir, 'node_modules');
  mkdirSync(nm);
  if (layout === 'npm') {
    symlinkSync(REPO, join(nm, 'appliance-forge'), 'dir');
  } else {
    const store = join(nm, '.pnpm', 'appliance-forge@0.1.0', 'node_modules');
    mkdirSync(store, { recursive: true });
    symlinkSync(REPO, join(store, 'appliance-forge'), 'dir');
    symlinkSync(join('.pnpm', 'appliance-forge@0.1.0', 'node_modules', 'appliance-forge'), join(nm, 'appliance-forge'), 'dir');
  }
  mkdirSync(join(nm, '@pulumi'));
  symlinkSync(join(REPO, 'node_modules/@pulumi/pulumi'), join(nm, '@pulumi', 'pulumi'), 'dir');
  writeFileSync(join(dir, 'Pulumi.yaml'), `name: ${name}\nruntime: nodejs\n`);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const toStruct = (v: Props): Struct => Struct.fromJavaScript(v as Record<string, JavaScriptValue>);
const fromStruct = (s: Struct | undefined): Props => (s ? s.toJavaScript() : {});

type Callback<Res> = (err: grpc.ServiceError | null, res: Res) => void;

export class PulumiHost {
  private stderrText = '';
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly client: provrpc.ResourceProviderClient,
    readonly port: number,
  ) {
    child.stderr.on('data', (d: Buffer) => { this.stderrText += d.toString(); });
  }

  /** Spawns the host with `cwd` as the project folder; resolves once it printed its port (bounded wait). */
  static async start(opts: { cwd: string; project?: string; env?: NodeJS.ProcessEnv; startTimeoutMs?: number }): Promise<PulumiHost> {
    const child = spawn(process.execPath, [HOST_SCRIPT, '127.0.0.1:1'], {
      cwd: opts.cwd,
      env: { ...process.env, PULUMI_NODEJS_PROJECT: opts.project ?? 'forge-test', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let early = '';
    const port = await new Promise<number>((res, rej) => {
      const timer = setTimeout(() => { child.kill(); rej(new Error(`host printed no port within ${opts.startTimeoutMs ?? 20000} ms: ${early}`)); }, opts.startTimeoutMs ?? 20000);
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) { clearTimeout(timer); res(Number(out.slice(0, nl).trim())); }
      });
      child.stderr.on('data', (d: Buffer) => { early += d.toString(); });
      child.on('exit', (code) => { clearTimeout(timer); rej(new Error(`host exited with ${code}: ${early}`)); });
    });
    const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new PulumiHost(child, client, port);
  }

  /** What the host and the provider code wrote to stderr (the host logs failures there). */
  get stderr(): string { return this.stderrText; }

  private call<Res>(send: (cb: Callback<Res>) => unknown): Promise<Res> {
    return new Promise((res, rej) => {
      send((err, out) => (err ? rej(err) : res(out)));
    });
  }

  /** ConfigureRequest with the stack's configuration (`appliance-forge:url`, …) as the engine sends it. */
  async configure(config: Record<string, string>): Promise<void> {
    const req = new provproto.ConfigureRequest();
    req.setArgs(toStruct(config));
    await this.call<provproto.ConfigureResponse>((cb) => this.client.configure(req, cb));
  }

  async check(urn: string, olds: Props, news: Props): Promise<{ inputs: Props; failures: CheckFailure[] }> {
    const req = new provproto.CheckRequest();
    req.setUrn(urn);
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await this.call<provproto.CheckResponse>((cb) => this.client.check(req, cb));
    return {
      inputs: fromStruct(res.getInputs()),
      failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  async diff(id: string, urn: string, olds: Props, news: Props): Promise<DiffAnswer> {
    const req = new provproto.DiffRequest();
    req.setId(id);
    req.setUrn(urn);
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await this.call<provproto.DiffResponse>((cb) => this.client.diff(req, cb));
    const c = res.getChanges();
    const K = provproto.DiffResponse.DiffChanges;
    return {
      changes: c === K.DIFF_SOME ? 'some' : c === K.DIFF_NONE ? 'none' : 'unknown',
      replaces: res.getReplacesList(),
      deleteBeforeReplace: res.getDeletebeforereplace(),
    };
  }

  async create(urn: string, props: Props): Promise<{ id: string; properties: Props }> {
    const req = new provproto.CreateRequest();
    req.setUrn(urn);
    req.setProperties(toStruct(props));
    const res = await this.call<provproto.CreateResponse>((cb) => this.client.create(req, cb));
    return { id: res.getId(), properties: fromStruct(res.getProperties()) };
  }

  async read(id: string, urn: string, props: Props): Promise<{ id: string; properties: Props }> {
    const req = new provproto.ReadRequest();
    req.setId(id);
    req.setUrn(urn);
    req.setProperties(toStruct(props));
    const res = await this.call<provproto.ReadResponse>((cb) => this.client.read(req, cb));
    return { id: res.getId(), properties: fromStruct(res.getProperties()) };
  }

  async update(id: string, urn: string, olds: Props, news: Props): Promise<{ properties: Props }> {
    const req = new provproto.UpdateRequest();
    req.setId(id);
    req.setUrn(urn);
    req.setOlds(toStruct(olds));
    req.setNews(toStruct(news));
    const res = await this.call<provproto.UpdateResponse>((cb) => this.client.update(req, cb));
    return { properties: fromStruct(res.getProperties()) };
  }

  async delete(id: string, urn: string, props: Props): Promise<void> {
    const req = new provproto.DeleteRequest();
    req.setId(id);
    req.setUrn(urn);
    req.setProperties(toStruct(props));
    await this.call<unknown>((cb) => this.client.delete(req, cb));
  }

  /** Closes the channel and ends the host process (the one this harness started, by its handle). */
  async close(): Promise<void> {
    this.client.close();
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((res) => this.child.once('exit', () => res()));
    this.child.kill('SIGTERM');
    await Promise.race([exited, new Promise<void>((res) => setTimeout(res, 5000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** A URN the way the engine writes one for a dynamic resource of this package. */
export function urnOf(type: string, name: string, project = 'forge-test', stack = 'test'): string {
  return `urn:pulumi:${stack}::${project}::pulumi-nodejs:dynamic/appliance-forge:${type}::${name}`;
}


// ---- A whole stack for lifecycle tests: reference server, user, project folder, host, configured provider ----

export type ResourceType = 'Software' | 'Appliance' | 'MachineImage' | 'Publication' | 'CloudAccount';

export interface Stack {
  server: { url: string; close(): Promise<void> };
  dataDir: string;
  user: { login: string; publicKey: string; secretKey: string };
  project: { dir: string; cleanup(): void };
  host: PulumiHost;
  /** The provider text each resource class registers (its exported provider object, serialized). */
  providerText: Record<ResourceType, string>;
  close(): Promise<void>;
}

type Forge = typeof import('../../provider/index');
type Pulumi = typeof import('@pulumi/pulumi');

export async function providerTexts(): Promise<Record<ResourceType, string>> {
  assertProviderBuilt();
  const forge = nodeRequire('./dist/provider/index.js') as Forge;
  const pulumi = nodeRequire('@pulumi/pulumi') as Pulumi;
  const out = {} as Record<ResourceType, string>;
  const providers: Record<ResourceType, unknown> = {
    Software: forge.softwareProvider, Appliance: forge.applianceProvider, MachineImage: forge.machineImageProvider,
    Publication: forge.publicationProvider, CloudAccount: forge.cloudAccountProvider,
  };
  for (const [type, provider] of Object.entries(providers) as Array<[ResourceType, unknown]>) {
    // The same call the dynamic Resource makes (@pulumi/pulumi dynamic/index.js serializeFunctionMaybeSecret).
    out[type] = (await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true })).text;
  }
  return out;
}

export interface StackOptions {
  /** The host's environment beside the runner's (default: none added). */
  env?: (server: { url: string }, user: Stack['user']) => NodeJS.ProcessEnv;
  /** The stack configuration sent by Configure (default: url, user and the user's API key pair). */
  config?: (server: { url: string }, user: Stack['user']) => Record<string, string>;
}

const keyPairConfig = (server: { url: string }, user: Stack['user']): Record<string, string> => ({
  'appliance-forge:url': server.url,
  'appliance-forge:user': user.login,
  'appliance-forge:apiKey': user.publicKey,
  'appliance-forge:secretKey': user.secretKey,
});

export async function startStack(layout: Layout = 'npm', o: StackOptions = {}): Promise<Stack> {
  const ref = await startReferenceServer({ alice: {} }, { prefix: 'af-pulumi-data-' });
  const { server, dataDir } = ref;
  const user = ref.users.alice;
  const project = makeProject(layout);
  const host = await PulumiHost.start({ cwd: project.dir, ...(o.env ? { env: o.env(server, user) } : {}) });
  await host.configure((o.config ?? keyPairConfig)(server, user));
  return {
    server, dataDir, user, project, host,
    providerText: await providerTexts(),
    async close() {
      await host.close();
      await ref.close();
      project.cleanup();
    },
  };
}
