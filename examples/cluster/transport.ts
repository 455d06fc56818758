/**
 * Messages over TCP: each frame is a 4-byte big-endian length followed by a `v8.serialize`d
 * object. A `Connection` sends frames, hands received ones to `onMessage`, and pairs requests
 * with replies by id. A `ConnectionPool` keeps idle connections per peer for reuse, like a Dask
 * worker's `rpc` pool.
 */
import net from "node:net";
import v8 from "node:v8";

/** Any v8-serializable object with an `op` naming what it asks for. */
export interface Message {
  op: string;
  [field: string]: unknown;
}

const HEADER = 4;
/** A frame this large is a bug or an attack, not data of this example. */
const MAX_FRAME = 1 << 30;

export function formatAddress(host: string, port: number): string {
  return `tcp://${host}:${port}`;
}

export function parseAddress(address: string): { host: string; port: number } {
  const match = /^tcp:\/\/([^:]+|\[[^\]]+\]):(\d+)$/.exec(address);
  if (match === null) throw new Error(`not a tcp://host:port address: ${address}`);
  return { host: match[1], port: Number(match[2]) };
}

export class ConnectionClosed extends Error {
  constructor(peer: string, cause?: unknown) {
    super(`connection to ${peer} closed`, { cause });
    this.name = "ConnectionClosed";
  }
}

export class Connection {
  /** Called for every received message that is not a reply to one of our requests. */
  onMessage: (message: Message, connection: Connection) => void = () => {};
  /** Called once when the socket is gone, for whatever reason. */
  onClose: (error: Error | undefined) => void = () => {};
  closed = false;
  /** Bytes of frames received so far, headers included. */
  bytesReceived = 0;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private nextRequest = 1;
  private readonly pending = new Map<number, { resolve: (reply: Message) => void; reject: (error: Error) => void }>();

  constructor(
    readonly socket: net.Socket,
    readonly peer: string,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", (error) => this.shut(error));
    socket.on("close", () => this.shut(undefined));
  }

  /** Sends one message; it goes out in order with the others, never interleaved. */
  send(message: Message): void {
    if (this.closed) throw new ConnectionClosed(this.peer);
    const body = v8.serialize(message);
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt32BE(body.length, 0);
    this.socket.cork();
    this.socket.write(header);
    this.socket.write(body);
    this.socket.uncork();
  }

  /** Sends `message` and resolves with the reply the peer sends through `reply()`. */
  request<T extends Message = Message>(message: Message): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new ConnectionClosed(this.peer));
        return;
      }
      const id = this.nextRequest++;
      this.pending.set(id, { resolve: resolve as (reply: Message) => void, reject });
      try {
        this.send({ ...message, requestId: id });
      } catch (error) {
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  /** Answers a message received with `request()`. */
  reply(request: Message, message: Message): void {
    this.send({ ...message, replyTo: request.requestId });
  }

  close(): void {
    if (!this.closed) this.socket.end();
    this.shut(undefined);
  }

  destroy(): void {
    this.socket.destroy();
    this.shut(undefined);
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= HEADER) {
      const head = this.chunks[0].length >= HEADER ? this.chunks[0] : this.flatten();
      const length = head.readUInt32BE(0);
      if (length > MAX_FRAME) {
        this.socket.destroy(new Error(`frame of ${length} bytes from ${this.peer}`));
        return;
      }
      if (this.buffered < HEADER + length) return;
      const all = this.flatten();
      const frame = all.subarray(HEADER, HEADER + length);
      const rest = all.subarray(HEADER + length);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.bytesReceived += HEADER + length;
      let message: Message;
      try {
        message = v8.deserialize(frame) as Message;
      } catch (error) {
        this.socket.destroy(error as Error);
        return;
      }
      this.dispatch(message);
    }
  }

  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0];
  }

  private dispatch(message: Message): void {
    const replyTo = message.replyTo;
    if (typeof replyTo === "number") {
      const waiter = this.pending.get(replyTo);
      if (waiter !== undefined) {
        this.pending.delete(replyTo);
        waiter.resolve(message);
        return;
      }
    }
    this.onMessage(message, this);
  }

  private shut(error: Error | undefined): void {
    if (this.closed && this.pending.size === 0) return;
    const first = !this.closed;
    this.closed = true;
    for (const waiter of this.pending.values()) waiter.reject(new ConnectionClosed(this.peer, error));
    this.pending.clear();
    if (first) this.onClose(error);
  }
}

/** Opens a connection to `tcp://host:port`. */
export function connect(address: string): Promise<Connection> {
  const { host, port } = parseAddress(address);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const failed = (error: Error) => reject(error);
    socket.once("error", failed);
    socket.once("connect", () => {
      socket.off("error", failed);
      resolve(new Connection(socket, address));
    });
  });
}

/** Listens on loopback port 0; every accepted connection goes to `accept`. */
export function listen(
  accept: (connection: Connection) => void,
  host = "127.0.0.1",
): Promise<{ server: net.Server; address: string }> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      accept(new Connection(socket, formatAddress(socket.remoteAddress ?? "?", socket.remotePort ?? 0)));
    });
    server.once("error", reject);
    server.listen(0, host, () => {
      const bound = server.address() as net.AddressInfo;
      resolve({ server, address: formatAddress(host, bound.port) });
    });
  });
}

/**
 * Idle connections per peer, reused for the next request to that peer. A connection is taken
 * with `acquire` (reused or newly opened) and given back with `release`; one request at a time
 * runs on a connection taken this way.
 */
export class ConnectionPool {
  private readonly idle = new Map<string, Connection[]>();
  private readonly all = new Set<Connection>();
  /** Connections opened, and acquisitions served from the pool. */
  opened = 0;
  reused = 0;

  constructor(private readonly maxIdlePerPeer = 4) {}

  async acquire(address: string): Promise<Connection> {
    const idle = this.idle.get(address);
    while (idle !== undefined && idle.length > 0) {
      const connection = idle.pop()!;
      if (!connection.closed) {
        this.reused++;
        return connection;
      }
    }
    const connection = await connect(address);
    this.opened++;
    this.all.add(connection);
    connection.onClose = () => this.all.delete(connection);
    return connection;
  }

  release(address: string, connection: Connection): void {
    if (connection.closed) return;
    let idle = this.idle.get(address);
    if (idle === undefined) {
      idle = [];
      this.idle.set(address, idle);
    }
    if (idle.length < this.maxIdlePerPeer) idle.push(connection);
    else connection.close();
  }

  closeAll(): void {
    for (const connection of this.all) connection.destroy();
    this.all.clear();
    this.idle.clear();
  }
}
