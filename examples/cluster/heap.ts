/** A binary min-heap by a numeric priority; ties leave in insertion order. */
export class Heap<T> {
  private readonly items: Array<{ item: T; priority: number; order: number }> = [];
  private counter = 0;

  get size(): number {
    return this.items.length;
  }

  push(item: T, priority: number): void {
    const items = this.items;
    items.push({ item, priority, order: this.counter++ });
    let at = items.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(at, parent)) break;
      [items[at], items[parent]] = [items[parent], items[at]];
      at = parent;
    }
  }

  peek(): T | undefined {
    return this.items[0]?.item;
  }

  pop(): T | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0].item;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        const right = left + 1;
        let smallest = at;
        if (left < items.length && this.less(left, smallest)) smallest = left;
        if (right < items.length && this.less(right, smallest)) smallest = right;
        if (smallest === at) break;
        [items[at], items[smallest]] = [items[smallest], items[at]];
        at = smallest;
      }
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a];
    const y = this.items[b];
    return x.priority < y.priority || (x.priority === y.priority && x.order < y.order);
  }
}
