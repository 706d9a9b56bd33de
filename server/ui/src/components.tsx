/** Small shared pieces: error banners, state badges, guarded buttons, the confirmation dialog. */
import type { JobState } from "@runlater/sdk/gen/job_pb.js";
import type { Queue } from "@runlater/sdk/gen/queue_service_pb.js";
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { type Action, can } from "./access.js";
import { stateNames } from "./format.js";

export function ErrorBanner({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ text }: { text: string | undefined }) {
  if (!text) return null;
  return (
    <p class="notice" role="status">
      {text}
    </p>
  );
}

/** What a form or an action came to: the server's refusal, or what was done. */
export function Outcome({ error, done }: { error: string | undefined; done: string | undefined }) {
  return (
    <>
      <ErrorBanner error={error} />
      <Notice text={done} />
    </>
  );
}

export function StateBadge({ state }: { state: JobState }) {
  return <Badge state={stateNames[state]} />;
}

/** A state by name, coloured by its `state-<name>` class (jobs, instances, runs, fires). */
export function Badge({ state }: { state: string }) {
  return <span class={`badge state-${state}`}>{state}</span>;
}

/** Paused and rate-limited markers of a queue. */
export function Markers({ queue }: { queue: Queue }) {
  const c = queue.config;
  return (
    <span class="markers">
      {c?.paused && <span class="badge paused">paused</span>}
      {c && c.maxDequeuePerSecond > 0 && (
        <span class="badge limited" title="rate limit on jobs handed out">
          ≤ {c.maxDequeuePerSecond}/s
        </span>
      )}
      {c?.fifo && <span class="badge fifo">fifo</span>}
    </span>
  );
}

/** A table's header row; a name starting with "#" is a numeric column (right-aligned, "#" dropped). */
export function Head({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) =>
          c.startsWith("#") ? (
            <th key={c} scope="col" class="num">
              {c.slice(1)}
            </th>
          ) : (
            <th key={c} scope="col">
              {c}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}

/** Renders its children only when the session may do `action` (on `queue`, when it names one) (access.ts). */
export function Allowed({ action, queue, children }: { action: Action; queue?: string; children: ComponentChildren }) {
  return can(action, queue) ? children : null;
}

export interface ConfirmProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/** A modal confirmation (native <dialog>: focus is trapped and Escape cancels). */
export function Confirm(p: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        p.onCancel();
      }}
    >
      <h2 id="confirm-title" class="dialog-title">
        {p.title}
      </h2>
      <div>{p.children}</div>
      <div class="actions">
        <button type="button" onClick={p.onCancel} disabled={p.busy}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={p.onConfirm} disabled={p.busy}>
          {p.busy ? "Working…" : p.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** Next/previous page buttons over pages reached one after another (page tokens, cursors). */
export function Pager(p: { page: number; hasNext: boolean; onPrevious: () => void; onNext: () => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={p.page === 1} onClick={p.onPrevious}>
        Previous page
      </button>
      <span>Page {p.page}</span>
      <button type="button" disabled={!p.hasNext} onClick={p.onNext}>
        Next page
      </button>
    </nav>
  );
}
