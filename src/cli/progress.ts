/**
 * Progress of a long `inject`/`explain` run on stderr (issue 24): documents and bytes done, of how many when the
 * input is a file, and the rate; or of what a caller describes (`describe`: `meshgate check` reading a large
 * cluster, issue 32). Shown only once a run has taken PROGRESS_AFTER_MS, so the usual run of a few
 * manifests prints nothing; on a terminal as one line rewritten in place, elsewhere (`--progress` into a log) as a
 * line every PROGRESS_EVERY_MS. stdout keeps only the output.
 */

/** A run shorter than this (2 s) is over before anyone waits for it. */
export const PROGRESS_AFTER_MS = 2000;
/** How often a terminal's line is redrawn: often enough to look alive, rarely enough to cost nothing. */
const TTY_EVERY_MS = 250;
/** How often a line is appended when stderr is not a terminal (a CI log). */
export const PROGRESS_EVERY_MS = 5000;

export interface ProgressOptions {
  name: string;
  write: (text: string) => void;
  /** stderr is a terminal: one line, redrawn. */
  tty: boolean;
  /** Input size in bytes, when known (a regular file). */
  total?: number;
  /** What is done so far, in words, instead of documents and bytes (then call tick(), not update()). */
  describe?: () => string;
  now?: () => number;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => (bytes / MIB).toFixed(1);

export class Progress {
  private readonly o: ProgressOptions;
  private readonly now: () => number;
  private readonly started: number;
  private shownAt: number | undefined;
  private shownDocuments = 0;
  private documents = 0;
  private bytes = 0;

  constructor(o: ProgressOptions) {
    this.o = o;
    this.now = o.now ?? (() => performance.now());
    this.started = this.now();
  }

  /** After each document: how many are done and how many input bytes they took. */
  update(documents: number, bytes: number): void {
    this.documents = documents;
    this.bytes = bytes;
    const t = this.now();
    if (t - this.started < PROGRESS_AFTER_MS) return;
    if (this.shownAt !== undefined && t - this.shownAt < (this.o.tty ? TTY_EVERY_MS : PROGRESS_EVERY_MS)) return;
    this.shownAt = t;
    this.show(t, false);
  }

  /** Something was done (with `describe`): the line is redrawn when it is due. */
  tick(): void {
    this.update(this.documents + 1, this.bytes);
  }

  /** The run ended (done or failed): the last figures, on a line of their own, if progress was shown at all. */
  end(): void {
    if (this.shownAt === undefined) return;
    if (this.documents !== this.shownDocuments) this.show(this.now(), true);
    else if (this.o.tty) this.o.write('\n');
  }

  /** e.g. "meshgate inject: 41,210 documents, 18.7 of 35.0 MiB (53%), 4.1 MiB/s, 4.6 s". */
  line(t: number): string {
    const seconds = (t - this.started) / 1000;
    if (this.o.describe) return `meshgate ${this.o.name}: ${this.o.describe()}, ${seconds.toFixed(1)} s`;
    const of =
      this.o.total !== undefined
        ? `${mib(this.bytes)} of ${mib(this.o.total)} MiB (${Math.floor((100 * this.bytes) / Math.max(this.o.total, 1))}%)`
        : `${mib(this.bytes)} MiB`;
    const rate = seconds > 0 ? this.bytes / MIB / seconds : 0;
    return `meshgate ${this.o.name}: ${this.documents.toLocaleString('en-US')} documents, ${of}, ${rate.toFixed(1)} MiB/s, ${seconds.toFixed(1)} s`;
  }

  private show(t: number, last: boolean): void {
    this.shownDocuments = this.documents;
    if (this.o.tty) this.o.write(`\r\x1b[K${this.line(t)}${last ? '\n' : ''}`);
    else this.o.write(`${this.line(t)}\n`);
  }
}
