/**
 * A progress bar on stderr: redrawn in place (at most 10 times a second) on a terminal, a line
 * every 25% otherwise, nothing when disabled.
 */
export class ProgressBar {
  private readonly started = performance.now();
  private lastDraw = 0;
  private lastQuarter = -1;
  private finished = false;

  constructor(
    private readonly total: number,
    private readonly label: string,
    private readonly enabled = true,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  update(done: number): void {
    if (!this.enabled || this.finished) return;
    if (this.stream.isTTY) {
      const now = performance.now();
      if (done < this.total && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      this.stream.write(`\r${this.line(done)}`);
    } else {
      const quarter = Math.floor((done / this.total) * 4);
      if (quarter === this.lastQuarter) return;
      this.lastQuarter = quarter;
      this.stream.write(`${this.line(done)}\n`);
    }
  }

  finish(done = this.total): void {
    if (!this.enabled || this.finished) return;
    if (this.stream.isTTY) this.stream.write(`\r${this.line(done)}\n`);
    else if (this.lastQuarter !== 4) this.stream.write(`${this.line(done)}\n`);
    this.finished = true;
  }

  private line(done: number): string {
    const width = 30;
    const fraction = this.total === 0 ? 1 : Math.min(1, done / this.total);
    const filled = Math.round(fraction * width);
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    return `${this.label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${this.total} tasks ${(fraction * 100).toFixed(0).padStart(3)}%  ${seconds} s`;
  }
}
