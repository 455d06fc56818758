/**
 * A private PostgreSQL for tests: a cluster of its own in a temporary directory (initdb), on a
 * free loopback port, started and stopped with pg_ctl within bounded times, and always stopped:
 * by `stop()`, and when this process exits without it (a failed test, a killed run), by a
 * signal to its postmaster; and when this process is killed outright (no exit handler runs), by a
 * watchdog shell that waits for it to go. The server binaries are Debian's (`apt-get install postgresql`, which
 * .ci/run does when they are missing): the newest /usr/lib/postgresql/<version>/bin, or
 * $POSTGRES_BIN. initdb and the server refuse to run as root: as root, they run as the
 * `postgres` user that Debian's package creates (through runuser), in a directory it owns.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** The directory of initdb, pg_ctl and postgres: $POSTGRES_BIN, else the newest of Debian's; undefined when none. */
export function findPostgres(): string | undefined {
  const fromEnv = process.env.POSTGRES_BIN;
  if (fromEnv !== undefined && fromEnv !== "") return fs.existsSync(path.join(fromEnv, "initdb")) ? fromEnv : undefined;
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((version) => fs.existsSync(path.join(root, version, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions.length === 0 ? undefined : path.join(root, versions[0], "bin");
}

export interface Postgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: trust authentication, loopback only. */
  url: string;
  port: number;
  /** Stops the server (immediate shutdown) and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 at the time of asking. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Runs `file` with `args` (as `postgres` when this process is root), failing after `timeoutMs`. */
function run(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, [...args]];
  return new Promise((resolve, reject) => {
    execFile(command, argv, { timeout: timeoutMs, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${path.basename(file)} ${args.join(" ")}: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Starts a fresh cluster (about a second); throws, having cleaned up, when it cannot within the bounds. */
export async function startPostgres(options: { bin?: string; timeoutMs?: number } = {}): Promise<Postgres> {
  const bin = options.bin ?? findPostgres();
  if (bin === undefined)
    throw new Error(
      "PostgreSQL not found: install Debian's postgresql package, or set POSTGRES_BIN to its bin directory",
    );
  const timeoutMs = options.timeoutMs ?? 30_000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "taskjourney-pg-"));
  const data = path.join(dir, "data");
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUser();
    fs.chownSync(dir, uid, gid);
  }
  let postmaster: number | undefined;
  let watchdog: ChildProcess | undefined;
  // Whatever happens to this process from here, the server goes with it.
  const onExit = (): void => {
    watchdog?.kill();
    if (postmaster !== undefined) signal(postmaster, "SIGQUIT");
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    try {
      if (fs.existsSync(path.join(data, "postmaster.pid")))
        await run(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "-t", "10", "stop"], 15_000);
    } catch {
      // pg_ctl could not: the postmaster itself, by its pid.
      if (postmaster !== undefined) signal(postmaster, "SIGKILL");
    } finally {
      watchdog?.kill();
      postmaster = undefined;
      process.removeListener("exit", onExit);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    await run(
      path.join(bin, "initdb"),
      ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions"],
      timeoutMs,
    );
    // A port free now may be taken before the server binds it: a few tries.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const settings = [
        "-c listen_addresses=127.0.0.1",
        `-c port=${port}`,
        `-c unix_socket_directories=${dir}`,
        "-c fsync=off",
        "-c synchronous_commit=off",
        "-c full_page_writes=off",
      ].join(" ");
      try {
        await run(
          path.join(bin, "pg_ctl"),
          [
            "-D",
            data,
            "-o",
            settings,
            "-l",
            path.join(dir, "server.log"),
            "-w",
            "-t",
            String(timeoutMs / 1000),
            "start",
          ],
          timeoutMs + 5_000,
        );
        postmaster = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        // Killed outright (SIGKILL, a runner's timeout), this process runs no exit handler: a shell
        // polling for it once a second stops the server (SIGQUIT: immediate shutdown) when it is gone.
        watchdog = spawn(
          "sh",
          [
            "-c",
            `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -QUIT ${postmaster} 2>/dev/null; rm -rf '${dir}'`,
          ],
          { detached: true, stdio: "ignore" },
        );
        watchdog.unref();
        return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, stop };
      } catch (error) {
        const log = fs.existsSync(path.join(dir, "server.log"))
          ? fs.readFileSync(path.join(dir, "server.log"), "utf8")
          : "";
        if (attempt >= 3 || !/could not bind|Address already in use/.test(log))
          throw new Error(`${(error as Error).message}\n${log}`, { cause: error });
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

function postgresUser(): { uid: number; gid: number } {
  const line = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (line === undefined) throw new Error("running as root, and there is no postgres user to run PostgreSQL as");
  const fields = line.split(":");
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}
