// Progress of one build: the percentage only grows (wire contract §8) and a report is sent only
// when the percentage or the message changes, however often the stages report.

export interface BuildProgress {
  readonly percentage: number;
  readonly message: string;
  readonly bytesDone?: number | undefined;
  readonly bytesTotal?: number | undefined;
}

export type ProgressSink = (p: BuildProgress) => void;

export interface Reporter {
  /** Report `fraction` (0..1) of the stage spanning percentages `from`..`to`. */
  stage(from: number, to: number, message: string, fraction?: number, bytes?: { done: number; total: number }): void;
}

export function reporter(onProgress?: ProgressSink): Reporter {
  let lastPct = -1;
  let lastMsg = '';
  return {
    stage(from, to, message, fraction = 0, bytes) {
      if (!onProgress) return;
      const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
      const pct = Math.max(lastPct, Math.min(100, Math.floor(from + (to - from) * f)));
      if (pct === lastPct && message === lastMsg) return;
      lastPct = pct;
      lastMsg = message;
      onProgress({ percentage: pct, message, bytesDone: bytes?.done, bytesTotal: bytes?.total });
    },
  };
}
