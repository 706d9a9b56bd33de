/**
 * The workers' way to the server: a TCP proxy in the runner whose connections a scenario
 * can break (the `net` control step), so that a broken stream or an unreachable server is
 * a step of data, the same for every SDK. Only workers connect through it (the driver's
 * `connect` names it as `worker_url`); the other actors talk to the server directly.
 *
 *   sever   destroy every connection now (new ones are forwarded again)
 *   hold    keep what workers send instead of forwarding it (until sever): with
 *           `when_held`, sever waits until something was held, e.g. a worker's acks,
 *           which are then lost with the connection and must be sent again
 *   down    refuse new connections (and sever the open ones): "no server there"
 *   up      accept and forward again
 *
 * It forwards bytes, never reads them, so TLS passes through: a worker's handshake is
 * with the server itself (its certificate names 127.0.0.1, the proxy's address too).
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export type NetAction = "sever" | "hold" | "down" | "up";

export class BreakableProxy {
  private server: Server | undefined;
  private port = 0;
  private readonly sockets = new Set<Socket>();
  private holding = false;
  private held = 0;
  private heldWaiters: Array<() => void> = [];

  private readonly targetPort: number;
  private readonly scheme: string;

  /** @param target the server's URL: its port, and its scheme, which the proxy's URL keeps (https in a secure run) */
  constructor(target: string) {
    const url = new URL(target);
    this.targetPort = Number(url.port);
    this.scheme = url.protocol;
  }

  get url(): string {
    return `${this.scheme}//127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await this.listen(0);
  }

  /** Back to plain forwarding: up, nothing held (before every scenario). */
  async reset(): Promise<void> {
    this.holding = false;
    this.held = 0;
    if (!this.server) await this.listen(this.port);
  }

  async apply(action: NetAction, whenHeld: boolean, timeoutMs: number): Promise<void> {
    switch (action) {
      case "hold":
        this.holding = true;
        this.held = 0;
        return;
      case "sever":
        if (whenHeld && this.held === 0) {
          const held = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), timeoutMs);
            this.heldWaiters.push(() => {
              clearTimeout(timer);
              resolve(true);
            });
          });
          if (!held) throw new Error(`net sever when_held: nothing was sent by a worker within ${timeoutMs} ms`);
        }
        this.severAll();
        return;
      case "down":
        await this.close();
        return;
      case "up":
        if (!this.server) await this.listen(this.port);
        return;
    }
  }

  async stop(): Promise<void> {
    await this.close();
  }

  private severAll(): void {
    this.holding = false;
    this.held = 0;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.severAll();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => this.forward(client));
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        this.port = (server.address() as { port: number }).port;
        this.server = server;
        resolve();
      });
    });
  }

  private forward(client: Socket): void {
    const upstream = createConnection({ host: "127.0.0.1", port: this.targetPort });
    this.sockets.add(client);
    this.sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on("data", (chunk: Buffer) => {
      if (!this.holding) {
        upstream.write(chunk);
        return;
      }
      this.held += chunk.length; // kept from the server: lost when the connection is severed
      for (const wake of this.heldWaiters.splice(0)) wake();
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  }
}
