/**
 * A button's or form's call: busy while it runs, then either what it did (a notice) or
 * why it failed (an error banner), never both.
 */
import { useState } from "preact/hooks";
import { describeError } from "./api.js";

export interface CallState {
  busy: boolean;
  error: string | undefined;
  done: string | undefined;
  /** Runs `call`; its answer (if any) becomes the notice, a throw the error. */
  run: (call: () => Promise<string | undefined>) => Promise<void>;
  /** Refuses before any call (a value out of bounds): shows `why`. */
  refuse: (why: string) => void;
}

export function useAction(): CallState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  return {
    busy,
    error,
    done,
    run: async (call) => {
      setBusy(true);
      setDone(undefined);
      try {
        const message = await call();
        setError(undefined);
        setDone(message);
      } catch (err) {
        setError(describeError(err));
      } finally {
        setBusy(false);
      }
    },
    refuse: (why) => {
      setDone(undefined);
      setError(why);
    },
  };
}
