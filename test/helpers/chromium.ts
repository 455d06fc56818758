/**
 * Headless Chromium driven over its DevTools protocol on a pipe (`--remote-debugging-pipe`:
 * requests on fd 3, answers and events on fd 4, each a JSON message ended by a NUL byte): no
 * port, no WebSocket library, no browser download — Debian's `chromium` package.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import type { Readable, Writable } from "node:stream";

/** Where Chromium is: $CHROMIUM, else the first of the usual paths that exists. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
  return candidates.find((candidate) => candidate !== undefined && candidate !== "" && fs.existsSync(candidate));
}

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

export class Chromium {
  private readonly child: ChildProcess;
  private readonly input: Writable;
  private nextId = 1;
  private buffer = "";
  private readonly pending = new Map<
    number,
    { resolve: (value: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  private readonly waiters: Array<{ method: string; resolve: (event: CdpEvent) => void }> = [];
  readonly events: CdpEvent[] = [];

  constructor(executable: string, userDataDir: string) {
    this.child = spawn(
      executable,
      [
        "--headless",
        "--remote-debugging-pipe",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        `--user-data-dir=${userDataDir}`,
        "about:blank",
      ],
      { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
    );
    this.input = this.child.stdio[3] as Writable;
    const output = this.child.stdio[4] as Readable;
    output.setEncoding("utf8");
    output.on("data", (chunk: string) => this.receive(chunk));
    this.child.on("exit", () => {
      for (const { reject } of this.pending.values()) reject(new Error("chromium exited"));
      this.pending.clear();
    });
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (let end = this.buffer.indexOf("\0"); end !== -1; end = this.buffer.indexOf("\0")) {
      const message = JSON.parse(this.buffer.slice(0, end)) as {
        id?: number;
        result?: Record<string, unknown>;
        error?: { message: string };
        method?: string;
        params?: Record<string, unknown>;
        sessionId?: string;
      };
      this.buffer = this.buffer.slice(end + 1);
      if (message.id !== undefined) {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(message.error.message));
        else waiter?.resolve(message.result ?? {});
      } else if (message.method !== undefined) {
        const event = { method: message.method, params: message.params ?? {}, sessionId: message.sessionId };
        this.events.push(event);
        for (let index = this.waiters.length - 1; index >= 0; index--) {
          if (this.waiters[index].method === event.method) this.waiters.splice(index, 1)[0].resolve(event);
        }
      }
    }
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.input.write(
        `${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`,
      );
    });
  }

  /** The next event named `method` (registered before the call that causes it). */
  next(method: string): Promise<CdpEvent> {
    return new Promise((resolve) => this.waiters.push({ method, resolve }));
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    await this.send("Browser.close").catch(() => undefined);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}
