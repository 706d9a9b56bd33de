/**
 * runlater.v1.ClusterInfoService: the cluster as this node sees it (read only, public; the
 * dashboard's cluster page). Brokers come from the registry this node reads anyway; the
 * partitions each is assigned are computed as every node computes them (rendezvous
 * assignment over the live brokers); lease epochs are known for this node's own broker
 * only (another broker's leases live in the store and in that broker).
 */
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  BrokerInfoSchema,
  ClusterInfoService,
  PartitionInfoSchema,
} from "@runlater/sdk/gen/cluster_info_service_pb.js";
import type { Membership } from "../cluster/membership.js";
import type { Clock } from "../domain/clock.js";
import type { Engine } from "../engine/engine.js";
import { msToTimestamp } from "../wire/time.js";

export interface ClusterInfoSources {
  role: string;
  membership: Membership;
  /** The leases this node's broker holds (Broker.heldLeases); undefined on a frontend. */
  heldLeases:
    | (() => Promise<Array<{ queue: string; partition: number; epoch: number; expiresAt: number }>>)
    | undefined;
  engine: Engine;
  clock: Clock;
}

/** Most partitions listed in one answer (10,000 queues × 256 partitions would be 2.5 M rows). */
export const CLUSTER_INFO_MAX_PARTITIONS = 100_000;

export function registerClusterInfo(router: ConnectRouter, s: ClusterInfoSources): ConnectRouter {
  return router.service(ClusterInfoService, {
    async getClusterInfo() {
      const now = s.clock.now();
      const [queues, held] = await Promise.all([s.engine.listQueueRecords(), s.heldLeases?.() ?? []]);
      const leases = new Map(held.map((l) => [`${l.queue}\u0000${l.partition}`, l]));
      const brokers = s.membership.brokers();
      const partitions = new Map(brokers.map((b) => [b.id, [] as ReturnType<typeof partitionInfo>[]]));
      let listed = 0;
      for (const q of [...queues].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const count = q.config.partitions;
        for (let p = 0; p < count && listed < CLUSTER_INFO_MAX_PARTITIONS; p++, listed++) {
          const owner = s.membership.ownerOf(q.name, p, count);
          // Only this node's own leases are known here: shown where the assignment agrees.
          const lease = owner?.id === s.membership.selfId ? leases.get(`${q.name}\u0000${p}`) : undefined;
          partitions.get(owner?.id ?? "")?.push(partitionInfo(q.name, p, lease));
        }
      }
      const leader = s.membership.leaderId();
      return {
        nodeRole: s.role,
        nodeBrokerId: s.membership.selfId ?? "",
        now: msToTimestamp(now),
        brokers: [...brokers]
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .map((b) =>
            create(BrokerInfoSchema, {
              brokerId: b.id,
              url: b.url,
              registrationExpiresAt: Number.isFinite(b.expiresAt) ? msToTimestamp(b.expiresAt) : undefined,
              leader: b.id === leader,
              partitions: partitions.get(b.id) ?? [],
            }),
          ),
      };
    },
  });
}

function partitionInfo(queue: string, partition: number, lease: { epoch: number; expiresAt: number } | undefined) {
  return create(PartitionInfoSchema, {
    queue,
    partition,
    leaseEpoch: lease ? BigInt(lease.epoch) : 0n,
    leaseExpiresAt: lease ? msToTimestamp(lease.expiresAt) : undefined,
  });
}
