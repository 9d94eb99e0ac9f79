/**
 * Standard output of `inject` and `explain`: each document's output is written once it is done, so memory holds
 * one document's, not the run's (issue 24) — after the first OUTPUT_HOLD_CHARS, which are held back. An error
 * within them (a refused pod, invalid YAML) leaves stdout empty, as it always did: `meshgate inject -f app.yaml |
 * kubectl apply -f -` then applies nothing. A run whose output goes past them is a large one; a later error
 * there finds the output of every document before it written, and the command says so (partial()).
 *
 * No backpressure is needed: on Linux, process.stdout writes to pipes and files synchronously.
 */

/**
 * 4 Mi characters held back: every manifest of the shared corpus and any ordinary Helm release's output
 * (hundreds of KB) fits many times; what is held is small next to the per-document bound (documents.ts).
 */
export const OUTPUT_HOLD_CHARS = 4 * 1024 * 1024;

export class DocumentOutput {
  private readonly write: (text: string) => void;
  private readonly separator: string;
  private readonly ifEmpty: string;
  private readonly holdChars: number;
  private held: string[] = [];
  private heldChars = 0;
  private streaming = false;
  private documents = 0;

  /**
   * @param write where the text goes (io.stdout)
   * @param separator written between two documents' outputs ("---\n" for manifests)
   * @param ifEmpty written at the end when no document wrote anything
   */
  constructor(write: (text: string) => void, separator: string, ifEmpty: string, holdChars = OUTPUT_HOLD_CHARS) {
    this.write = write;
    this.separator = separator;
    this.ifEmpty = ifEmpty;
    this.holdChars = holdChars;
  }

  /** One document's output ("" for none). */
  add(text: string): void {
    if (text === '') return;
    const out = this.documents > 0 ? this.separator + text : text;
    this.documents++;
    if (this.streaming) {
      this.write(out);
      return;
    }
    this.held.push(out);
    this.heldChars += out.length;
    if (this.heldChars > this.holdChars) {
      this.streaming = true;
      this.flushHeld();
    }
  }

  /** The run succeeded: what is held goes out. */
  finish(): void {
    if (this.documents === 0) this.write(this.ifEmpty);
    this.flushHeld();
  }

  /** After an error: some output is already written (all of it, up to the document that failed). */
  partial(): boolean {
    return this.streaming;
  }

  private flushHeld(): void {
    if (this.held.length > 0) this.write(this.held.join(''));
    this.held = [];
    this.heldChars = 0;
  }
}
