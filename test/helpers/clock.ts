/** A clock tests move by hand, in seconds. */
export class FakeClock {
  constructor(public seconds = 0) {}
  readonly now = (): number => this.seconds;
  advance(seconds: number): number {
    this.seconds += seconds;
    return this.seconds;
  }
  set(seconds: number): number {
    this.seconds = seconds;
    return this.seconds;
  }
}
