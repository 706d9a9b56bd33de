/**
 * Live data: a read repeated every `everyMs` (1–2 s on the pages), the next one starting
 * only when the last has answered, paused while the tab is hidden. A failure is shown and
 * the last good answer kept; the next poll tries again.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describeError } from "./api.js";

export interface Polled<T> {
  data: T | undefined;
  /** The last call's error, cleared by the next success. */
  error: string | undefined;
  /** Read again now (after a change the page made). */
  refresh: () => void;
}

export function usePoll<T>(read: (signal: AbortSignal) => Promise<T>, everyMs: number, deps: unknown[]): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    setData(undefined);
    setError(undefined);
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let inFlight: AbortController | undefined;
    const tick = async () => {
      clearTimeout(timer);
      if (stopped) return;
      if (document.hidden) {
        timer = setTimeout(tick, everyMs);
        return;
      }
      inFlight?.abort();
      const call = (inFlight = new AbortController());
      try {
        const value = await read(call.signal);
        if (stopped || call.signal.aborted) return;
        setData(value);
        setError(undefined);
      } catch (err) {
        if (stopped || call.signal.aborted) return;
        setError(describeError(err));
      }
      if (!stopped) timer = setTimeout(tick, everyMs);
    };
    kick.current = () => void tick();
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      inFlight?.abort();
    };
  }, deps);
  const refresh = useCallback(() => kick.current(), []);
  return { data, error, refresh };
}
