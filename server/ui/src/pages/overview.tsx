/**
 * Overview: every queue with its counts by state, throughput (enqueued, succeeded and
 * failed per second from the server's counters), the oldest pending job's age, and the
 * paused / rate-limited markers; read every POLL_MS. A form creates a queue.
 */
import type { Queue } from "@runlater/sdk/gen/queue_service_pb.js";
import { useMemo, useState } from "preact/hooks";
import { api, describeError } from "../api.js";
import { Allowed, ErrorBanner, Markers, Notice } from "../components.js";
import { count, durationMs, rate, span, timestampMs } from "../format.js";
import { usePoll } from "../poll.js";
import { type Rates, RateTracker } from "../rates.js";
import { href } from "../router.js";

export const POLL_MS = 1_500;

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
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col" class="num">
                  Pending
                </th>
                <th scope="col" class="num">
                  Scheduled
                </th>
                <th scope="col" class="num">
                  Running
                </th>
                <th scope="col" class="num">
                  Succeeded
                </th>
                <th scope="col" class="num">
                  Failed
                </th>
                <th scope="col" class="num">
                  Oldest pending
                </th>
                <th scope="col" class="num" title="enqueued / succeeded / failed attempts per second">
                  Per second (in / ok / failed)
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map(({ queue: q, rates }) => {
                const s = q.stats;
                const age = durationMs(s?.oldestPendingAge);
                return (
                  <tr key={q.name} data-queue={q.name}>
                    <th scope="row">
                      <a href={href("queues", q.name)}>{q.name}</a> <Markers queue={q} />
                    </th>
                    <td class="num" data-count="pending">
                      {count(s?.pending ?? 0n)}
                    </td>
                    <td class="num" data-count="scheduled">
                      {count(s?.scheduled ?? 0n)}
                    </td>
                    <td class="num" data-count="running">
                      {count(s?.running ?? 0n)}
                    </td>
                    <td class="num" data-count="succeeded">
                      {count(s?.succeeded ?? 0n)}
                    </td>
                    <td class="num" data-count="failed">
                      {count(s?.failed ?? 0n)}
                    </td>
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(undefined);
    if (!QUEUE_NAME.test(name)) {
      setError("A queue name is 1 to 64 letters, digits or underscores.");
      return;
    }
    setBusy(true);
    try {
      const res = await api.queues.createQueue({ name });
      setError(undefined);
      setDone(res.created ? `Queue ${name} created.` : `Queue ${name} already exists.`);
      setName("");
      onCreated();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
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
      <ErrorBanner error={error} />
      <Notice text={done} />
    </form>
  );
}
