// Progress of an mmdebstrap run, read from its `--verbose` output (apt's and dpkg's own lines): it has
// no machine-readable progress. A run has two apt batches (the essential/required set, then the rest
// inside the chroot), each "N newly installed" → Get: lines (sized in [..]) → Unpacking/Setting up.

export type OsLayerPhase = 'resolving' | 'downloading' | 'installing';

export interface OsLayerProgress {
  readonly phase: OsLayerPhase;
  /** Of the whole layer build, 0..1, never decreasing. */
  readonly fraction: number;
  readonly message: string;
}

/** Where each step sits in the whole build: [start, end] of the fraction. */
const SPAN = {
  resolving: [0, 0.08],
  download1: [0.08, 0.2],
  install1: [0.2, 0.4],
  resolve2: [0.4, 0.42],
  download2: [0.42, 0.55],
  install2: [0.55, 0.97],
} as const;

const UNIT: Record<string, number> = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 };

function apparentBytes(n: string, unit: string): number {
  return Number(n) * (UNIT[unit] ?? 1);
}

/** Feeds on mmdebstrap's stderr lines, calls `emit` whenever the fraction or message changes. */
export class MmdebstrapProgress {
  private batch = 0;
  private step: keyof typeof SPAN = 'resolving';
  private packages = 0;
  private needBytes = 0;
  private gotBytes = 0;
  private gets = 0;
  private events = 0;
  private last = -1;
  private lastMessage = '';

  constructor(private readonly emit: (p: OsLayerProgress) => void) {}

  line(l: string): void {
    let m: RegExpExecArray | null;
    if ((m = /^(\d+) upgraded, (\d+) newly installed/.exec(l))) {
      this.batch += 1;
      this.packages = Number(m[2]);
      this.gets = 0;
      this.gotBytes = 0;
      this.needBytes = 0;
      this.events = 0;
      this.step = this.batch === 1 ? 'download1' : 'download2';
      this.report(0, `downloading 0/${this.packages} packages`);
    } else if ((m = /^Need to get ([\d.]+) (\w+)/.exec(l))) {
      this.needBytes = apparentBytes(m[1]!, m[2]!);
    } else if (this.step.startsWith('download') && (m = /^Get:\d+ \S+ \S+ \S+ (\S+) .*\[([\d.]+) (\w+)\]$/.exec(l))) {
      this.gets += 1;
      this.gotBytes += apparentBytes(m[2]!, m[3]!);
      const f = this.needBytes > 0 ? this.gotBytes / this.needBytes : this.gets / Math.max(1, this.packages);
      this.report(f, `downloading ${this.gets}/${this.packages} packages (${m[1]})`);
    } else if (/^I: (installing essential packages|installing remaining packages)/.test(l)) {
      if (l.includes('remaining')) {
        this.step = 'resolve2';
        this.report(0, 'resolving the remaining packages');
      } else {
        this.step = 'install1';
        this.events = 0;
        this.report(0, `installing 0/${this.packages} packages`);
      }
    } else if ((m = /^(Unpacking|Setting up) (\S+)/.exec(l))) {
      if (this.step === 'download2') {
        this.step = 'install2';
        this.events = 0;
      }
      if (this.step !== 'install1' && this.step !== 'install2') return;
      this.events += 1;
      const done = Math.floor(this.events / 2);
      this.report(this.events / (2 * Math.max(1, this.packages)), `installing ${Math.min(done, this.packages)}/${this.packages} packages (${m[1] === 'Unpacking' ? 'unpacking' : 'setting up'} ${m[2]!.replace(/:\w+$/, '')})`);
    } else if (/^I: running apt-get update/.test(l)) {
      this.report(0.3, 'reading the mirror indexes');
    }
  }

  private report(within: number, message: string): void {
    const [a, b] = SPAN[this.step];
    const f = Math.max(this.last, a + (b - a) * Math.min(1, Math.max(0, within)));
    const phase: OsLayerPhase = this.step.startsWith('download') ? 'downloading' : this.step.startsWith('install') ? 'installing' : 'resolving';
    const rounded = Math.floor(f * 1000) / 1000;
    if (rounded === this.last && message === this.lastMessage) return;
    this.last = rounded;
    this.lastMessage = message;
    this.emit({ phase, fraction: rounded, message });
  }
}
