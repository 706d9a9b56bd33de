/**
 * Signing in with an API token, when the server runs with auth (docs/security.md). At start
 * the dashboard asks TokenService.WhoAmI who it is: without auth every button shows; with
 * auth, the token's scopes and queue patterns decide (access.ts); with no token, or one the
 * server refuses, the login form shows the server's reason. A call refused as
 * unauthenticated later on (the token expired or was revoked) brings the form back.
 */
import type { Token } from "@runlater/sdk/gen/token_service_pb.js";
import { useEffect, useState } from "preact/hooks";
import { grants } from "./access.js";
import { api, describeError, isUnauthenticated, session } from "./api.js";
import { ErrorBanner } from "./components.js";

export type Auth =
  | { state: "checking"; problem: string | undefined }
  /** `token` unset: the server has no auth. */
  | { state: "in"; token: Token | undefined; signOut: () => void }
  /** `reason`: why the server refused (unset after signing out). */
  | { state: "out"; reason: string | undefined; signIn: (token: string) => Promise<void> };

/** How long to wait before asking again when the server could not be asked at all. */
const RETRY_MS = 2_000;

export function useAuth(): Auth {
  const [token, setToken] = useState<Token | undefined>();
  const [state, setState] = useState<"checking" | "in" | "out">("checking");
  const [message, setMessage] = useState<string | undefined>();

  const ask = async (): Promise<void> => {
    const sent = session.token;
    try {
      const me = await api.tokens.whoAmI({});
      grants.current = me.token ? { scopes: new Set(me.token.scopes), queues: me.token.queues } : undefined;
      setToken(me.token);
      setMessage(undefined);
      setState("in");
    } catch (err) {
      if (!isUnauthenticated(err)) {
        setMessage(describeError(err));
        throw err;
      }
      // Without a token, that auth is on is news, not an error: the form says so.
      setMessage(sent === "" ? undefined : describeError(err));
      session.remember("");
      setState("out");
    }
  };

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const first = () => ask().catch(() => (timer = setTimeout(first, RETRY_MS)));
    void first();
    session.refused = (reason) => {
      session.remember("");
      setMessage(reason);
      setState("out");
    };
    return () => {
      clearTimeout(timer);
      session.refused = undefined;
    };
  }, []);

  if (state === "checking") return { state, problem: message };
  if (state === "in")
    return {
      state,
      token,
      signOut: () => {
        session.remember("");
        setMessage(undefined);
        setState("out");
      },
    };
  return {
    state,
    reason: message,
    signIn: async (secret) => {
      session.remember(secret);
      await ask().catch((err: unknown) => setMessage(describeError(err)));
    },
  };
}

export function LoginPage({
  reason,
  signIn,
}: {
  reason: string | undefined;
  signIn: (token: string) => Promise<void>;
}) {
  const [secret, setSecret] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    void signIn(secret.trim()).finally(() => setBusy(false));
  };
  return (
    <section>
      <h1>Sign in</h1>
      <p>
        This server runs with auth: every call needs an API token. Paste one (an operator makes one with{" "}
        <code>runlater token create dashboard --scope read</code>). It is kept in this tab only, until you sign out or
        close it.
      </p>
      <ErrorBanner error={reason} />
      <form class="inline" onSubmit={submit} aria-label="Sign in">
        <label>
          API token
          <input
            type="password"
            name="token"
            autocomplete="off"
            value={secret}
            size={60}
            required
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </section>
  );
}

/** The header's part: which token is in use, and a way out. */
export function WhoBadge({ token, signOut }: { token: Token; signOut: () => void }) {
  return (
    <span class="who">
      <span title={`token ${token.tokenId}`}>
        {token.name} ({token.scopes.join(", ")}
        {token.queues.length > 0 ? `; queues ${token.queues.join(", ")}` : ""})
      </span>
      <button type="button" onClick={signOut}>
        Sign out
      </button>
    </span>
  );
}
