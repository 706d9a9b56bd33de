/**
 * Calls to other runlater nodes: forwarded Dequeue (WorkerService, marked with the
 * forwarded header) and ClusterService.Notify and ReleaseForwarded, over HTTP/1.1 with keep-alive: a pool of
 * connections per peer, closed when the peer leaves the registry. Over TLS when the peer
 * advertises an https:// URL.
 *
 * Why not HTTP/2: connect-node's session manager (2.x) can raise an uncaught
 * "received GOAWAY without any open streams" error when a peer shuts down between
 * calls, which would crash this node whenever another one restarts.
 */
import { Agent } from "node:http";
import { Agent as TlsAgent } from "node:https";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import type { JobRecord } from "../domain/job-record.js";
import { ClusterService, type NotifyRequestSchema } from "../gen/runlater/cluster/v1/cluster_pb.js";
import { dequeuedFromProto } from "../wire/dequeued-job.js";
import { CLUSTER_SECRET_HEADER, FORWARDED_CALL_HEADER, FORWARDED_HEADER } from "../wire/forwarding.js";
import { msToDuration } from "../wire/time.js";

/** Beyond the long poll itself, how long a forwarded Dequeue may take before it is given up. */
const FORWARD_SLACK_MS = 10_000;
const NOTIFY_TIMEOUT_MS = 5_000;

/** TLS options for calls to https:// peers (PEM). */
export interface PeerTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

interface Peer {
  agent: Agent;
  worker: Client<typeof WorkerService>;
  cluster: Client<typeof ClusterService>;
}

export class Peers {
  private readonly peers = new Map<string, Peer>();

  /**
   * @param clusterSecret sent on every call, so the other nodes know it is one of them (docs/security.md)
   * @param tls for https:// peers: the CA their certificates chain to (default Node's trusted
   *   CAs), and this node's certificate and key when the others require client certificates
   */
  constructor(
    private readonly clusterSecret?: string,
    private readonly tls: () => PeerTls = () => ({}),
  ) {}

  async dequeue(
    url: string,
    p: { queue: string; limit: number; waitMs: number; signal?: AbortSignal; callId?: string },
  ): Promise<JobRecord[]> {
    const headers: Record<string, string> = { ...this.secretHeader(), [FORWARDED_HEADER]: "1" };
    if (p.callId !== undefined) headers[FORWARDED_CALL_HEADER] = p.callId;
    const res = await this.peer(url).worker.dequeue(
      { queue: p.queue, limit: p.limit, wait: p.waitMs > 0 ? msToDuration(p.waitMs) : undefined },
      { signal: p.signal, headers, timeoutMs: p.waitMs + FORWARD_SLACK_MS },
    );
    return res.jobs.map(dequeuedFromProto);
  }

  async notify(url: string, req: MessageInitShape<typeof NotifyRequestSchema>): Promise<void> {
    await this.peer(url).cluster.notify(req, { timeoutMs: NOTIFY_TIMEOUT_MS, headers: this.secretHeader() });
  }

  /** Tells the broker at `url` that forwarded calls `callIds` were cancelled unread. */
  async releaseForwarded(url: string, callIds: string[]): Promise<void> {
    await this.peer(url).cluster.releaseForwarded(
      { callIds },
      { timeoutMs: NOTIFY_TIMEOUT_MS, headers: this.secretHeader() },
    );
  }

  /** Drops connections to nodes no longer in `urls`. */
  retain(urls: Set<string>): void {
    for (const [url, peer] of [...this.peers]) {
      if (urls.has(url)) continue;
      peer.agent.destroy();
      this.peers.delete(url);
    }
  }

  private secretHeader(): Record<string, string> {
    return this.clusterSecret === undefined ? {} : { [CLUSTER_SECRET_HEADER]: this.clusterSecret };
  }

  close(): void {
    this.retain(new Set());
  }

  private peer(url: string): Peer {
    let peer = this.peers.get(url);
    if (!peer) {
      const agent = url.startsWith("https:")
        ? new TlsAgent({ keepAlive: true, ...this.tls() })
        : new Agent({ keepAlive: true });
      const transport = createConnectTransport({
        baseUrl: url,
        httpVersion: "1.1",
        useBinaryFormat: true,
        nodeOptions: { agent },
      });
      peer = {
        agent,
        worker: createClient(WorkerService, transport),
        cluster: createClient(ClusterService, transport),
      };
      this.peers.set(url, peer);
    }
    return peer;
  }
}
