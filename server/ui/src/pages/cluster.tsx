/**
 * The cluster as the node serving the dashboard sees it (ClusterInfoService): the live
 * brokers, which is the leader, the partitions each is assigned, and the lease epochs the
 * answering node's broker holds. Read every 2 s.
 */
import type { PartitionInfo } from "@runlater/sdk/gen/cluster_info_service_pb.js";
import { api } from "../api.js";
import { ErrorBanner, Head } from "../components.js";
import { span, timestampMs } from "../format.js";
import { usePoll } from "../poll.js";
import { href } from "../router.js";

export function ClusterPage() {
  const { data, error } = usePoll((signal) => api.cluster.getClusterInfo({}, { signal }), 2_000, []);
  const now = timestampMs(data?.now) ?? Date.now();
  return (
    <section>
      <h1>Cluster</h1>
      <ErrorBanner error={error} />
      {!data && !error && <p>Loading…</p>}
      {data && (
        <>
          <p>
            This page is served by a node of role <strong>{data.nodeRole}</strong>
            {data.nodeBrokerId ? (
              <>
                {" "}
                (broker <span class="mono">{data.nodeBrokerId}</span>)
              </>
            ) : null}
            . Lease epochs are known for that node's own broker; other brokers' partitions show their assignment.
          </p>
          {data.brokers.length === 0 && (
            <p role="status">No live broker: Dequeue calls wait or fail until one registers.</p>
          )}
          {data.brokers.map((b) => {
            const expires = timestampMs(b.registrationExpiresAt);
            return (
              <article class="broker" key={b.brokerId} aria-label={`Broker ${b.brokerId}`}>
                <h2 class="mono">
                  {b.brokerId} {b.leader && <span class="badge leader">leader</span>}
                  {b.brokerId === data.nodeBrokerId && <span class="badge self">this node</span>}
                </h2>
                <p>
                  {b.url} · {b.partitions.length} partitions
                  {expires !== undefined ? ` · registration renews within ${span(Math.max(0, expires - now))}` : ""}
                </p>
                <Partitions partitions={b.partitions} now={now} self={b.brokerId === data.nodeBrokerId} />
              </article>
            );
          })}
        </>
      )}
    </section>
  );
}

function Partitions({ partitions, now, self }: { partitions: PartitionInfo[]; now: number; self: boolean }) {
  if (partitions.length === 0) return <p>No partitions assigned.</p>;
  const byQueue = new Map<string, PartitionInfo[]>();
  for (const p of partitions) {
    let list = byQueue.get(p.queue);
    if (!list) byQueue.set(p.queue, (list = []));
    list.push(p);
  }
  return (
    <table class="partitions">
      <Head columns={["Queue", "Partitions (lease epoch, expires in)"]} />
      <tbody>
        {[...byQueue].map(([queue, list]) => (
          <tr key={queue}>
            <th scope="row">
              <a href={href("queues", queue)}>{queue}</a>
            </th>
            <td>
              {list.map((p) => {
                const expires = timestampMs(p.leaseExpiresAt);
                return (
                  <span class="partition" key={p.partition}>
                    #{p.partition}
                    {p.leaseEpoch > 0n
                      ? ` (epoch ${p.leaseEpoch}${expires !== undefined ? `, ${span(Math.max(0, expires - now))}` : ""})`
                      : self
                        ? " (not leased yet: taken when first served)"
                        : " (epoch known to that broker)"}
                  </span>
                );
              })}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
