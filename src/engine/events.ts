// What the engine tells its adapters while it works. The command line draws progress bars or plain
// lines from these, the Action groups its log by phase. Messages are masked before they leave the
// engine (secrets.ts).

export type Phase = 'resolve' | 'software' | 'appliance' | 'images' | 'publications' | 'remove';

export type EngineEvent =
  | { readonly type: 'phase'; readonly phase: Phase; readonly title: string }
  /** A change made on the service, or a decision worth a line. */
  | { readonly type: 'step'; readonly message: string }
  /** Upload, generation or publication progress; `id` is stable for one task. */
  | {
      readonly type: 'progress';
      readonly id: string;
      readonly label: string;
      readonly percentage: number;
      readonly message?: string | undefined;
      readonly bytesDone?: number | undefined;
      readonly bytesTotal?: number | undefined;
    }
  | { readonly type: 'done'; readonly id: string; readonly label: string; readonly ok: boolean; readonly message?: string | undefined };

export type EventSink = (e: EngineEvent) => void;
