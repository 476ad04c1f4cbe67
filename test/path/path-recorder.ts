/** One visit: the path entered `file` (from another file) by calling `fn`. */
export interface Visit {
  file: string;
  fn: string;
  depth: number;
}

/**
 * Records, from the trace plugin's enter/exit calls, each visit to a file: a call from a
 * function in one file into a function in another. Calls within a file are not visits.
 */
export class PathRecorder {
  readonly visits: Visit[] = [];
  private readonly stack: string[] = [];
  private readonly fns: string[] = [];
  /** Per stack frame: how many visits deep it is (calls within a file keep the depth). */
  private readonly depths: number[] = [];
  /** Set once `stopAfter` returned: nothing later is part of the path. */
  private done = false;

  constructor(
    /**
     * The path starts when this file's function is entered (`file:fn`) from no traced call;
     * a start that returns before `stopAfter` returned is dropped, and the next one starts.
     */
    private readonly start: string,
    /** The path ends when this function (`file:fn`) returns. */
    private readonly stopAfter: string,
  ) {}

  enter(file: string, fn: string): void {
    if (this.done) return;
    if (this.stack.length === 0 && `${file}:${fn}` !== this.start) return;
    const top = this.depths.at(-1) ?? -1;
    const visit = this.stack.at(-1) !== file;
    if (visit) this.visits.push({ file, fn, depth: top + 1 });
    this.stack.push(file);
    this.fns.push(fn);
    this.depths.push(visit ? top + 1 : top);
  }

  exit(): void {
    if (this.done || this.stack.length === 0) return;
    const file = this.stack.pop();
    const fn = this.fns.pop();
    this.depths.pop();
    if (`${file}:${fn}` === this.stopAfter) this.done = true;
    // The start returned without reaching the end (a model message no client hears of): not
    // the path; the next start begins it afresh.
    else if (this.stack.length === 0) this.visits.length = 0;
  }

  /** The path reached its end (`stopAfter` returned). */
  get complete(): boolean {
    return this.done;
  }

  /** Files on the path, in first-visit order. */
  files(): string[] {
    return [...new Set(this.visits.map((v) => v.file))];
  }

  /** Visits to a file already visited before. */
  returns(): Visit[] {
    const seen = new Set<string>();
    return this.visits.filter((v) => {
      const again = seen.has(v.file);
      seen.add(v.file);
      return again;
    });
  }

  /** The visits as an indented call outline. */
  outline(): string {
    return this.visits.map((v) => `${"  ".repeat(v.depth)}${v.file} ${v.fn}`).join("\n");
  }
}
