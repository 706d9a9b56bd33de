/**
 * Overview: every queue with its counts by state, throughput (enqueued, succeeded and
 * failed per second from the server's counters), the oldest pending job's age, and the
 * paused / rate-limited markers; read every POLL_MS. A form creates a queue.
 */
import type { Queue } from "@runlater/sdk/gen/queue_service_pb.js";
import { useMemo, useState } from "preact/hooks";
import { useAction } from "../action.js";
import { api } from "../api.js";
import { Allowed, ErrorBanner, Head, Markers, Outcome } from "../components.js";
import { count, durationMs, rate, span, timestampMs } from "../format.js";
import { usePoll } from "../poll.js";
import { type Rates, RateTracker } from "../rates.js";
import { href } from "../router.js";

export const POLL_MS = 1_500;

/** The counts by state a queue's stats carry, in the order they are shown. */
const COUNTED = ["pending", "scheduled", "running", "succeeded", "failed"] as const;

/** Queue names as the server takes them (QueueService.CreateQueue). */
export const QUEUE_NAME = /^[A-Za-z0-9_]{1,64}$/;

export function ratesOf(tracker: RateTracker, q: Queue, at: number): Rates | undefined {
  const c = q.stats?.counters;
  if (!c) return undefined;
  return tracker.add(q.name, at, {
    enqueued: Number(c.enqueued),
    succeeded: Number(c.succeeded),
    failed: Number(c.failed),
    since: timestampMs(c.countingSince) ?? 0,
  });
}

export function OverviewPage() {
  const tracker = useMemo(() => new RateTracker(), []);
  const { data, error, refresh } = usePoll(
    async (signal) => {
      const { queues } = await api.queues.listQueues({}, { signal });
      const at = Date.now();
      tracker.retain(new Set(queues.map((q) => q.name)));
      return queues.map((q) => ({ queue: q, rates: ratesOf(tracker, q, at) }));
    },
    POLL_MS,
    [],
  );
  return (
    <section>
      <h1>Queues</h1>
      <ErrorBanner error={error} />
      {data === undefined && !error && <p>Loading…</p>}
      {data !== undefined && data.length === 0 && <p>No queues yet.</p>}
      {data !== undefined && data.length > 0 && (
        <div class="scroll">
          <table class="queues" aria-label="Queues">
            <Head
              columns={[
                "Queue",
                "#Pending",
                "#Scheduled",
                "#Running",
                "#Succeeded",
                "#Failed",
                "#Oldest pending",
                "#Per second (in / ok / failed)",
              ]}
            />
            <tbody>
              {data.map(({ queue: q, rates }) => {
                const s = q.stats;
                const age = durationMs(s?.oldestPendingAge);
                return (
                  <tr key={q.name} data-queue={q.name}>
                    <th scope="row">
                      <a href={href("queues", q.name)}>{q.name}</a> <Markers queue={q} />
                    </th>
                    {COUNTED.map((state) => (
                      <td key={state} class="num" data-count={state}>
                        {count(s?.[state] ?? 0n)}
                      </td>
                    ))}
                    <td class="num">{age > 0 ? span(age) : "—"}</td>
                    <td class="num rates">
                      {rate(rates?.enqueued)} / {rate(rates?.succeeded)} / {rate(rates?.failed)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Allowed action="queue.create">
        <CreateQueue onCreated={refresh} />
      </Allowed>
    </section>
  );
}

function CreateQueue({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const { busy, error, done, run, refuse } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (!QUEUE_NAME.test(name)) return refuse("A queue name is 1 to 64 letters, digits or underscores.");
    void run(async () => {
      const res = await api.queues.createQueue({ name });
      setName("");
      onCreated();
      return res.created ? `Queue ${name} created.` : `Queue ${name} already exists.`;
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-label="Create a queue">
      <h2>Create a queue</h2>
      <label>
        Name
        <input
          name="queue-name"
          value={name}
          maxLength={64}
          pattern="[A-Za-z0-9_]{1,64}"
          required
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={busy}>
        Create queue
      </button>
      <Outcome error={error} done={done} />
    </form>
  );
}
