/**
 * The dashboard shell: header, navigation, and the page the hash names. Pages are entries
 * of `routes`; `nav` lists the top-level ones. With auth on, no page shows until a token
 * is signed in (login.tsx).
 */
import { ErrorBanner } from "./components.js";
import { LoginPage, useAuth, WhoBadge } from "./login.js";
import { ClusterPage } from "./pages/cluster.js";
import { InstancePage } from "./pages/instance.js";
import { JobPage } from "./pages/job.js";
import { OverviewPage } from "./pages/overview.js";
import { QueuePage } from "./pages/queue.js";
import { SchedulePage, SchedulesPage } from "./pages/schedules.js";
import { WorkflowsPage } from "./pages/workflows.js";
import { match, type Route, useHashPath } from "./router.js";

const routes: Route[] = [
  { pattern: [], render: () => <OverviewPage /> },
  { pattern: ["queues", ":name"], render: (p) => <QueuePage name={p.name!} /> },
  { pattern: ["jobs", ":id"], render: (p) => <JobPage id={p.id!} /> },
  { pattern: ["workflows"], render: () => <WorkflowsPage workflow="" /> },
  { pattern: ["workflows", ":name"], render: (p) => <WorkflowsPage workflow={p.name!} /> },
  { pattern: ["instances", ":id"], render: (p) => <InstancePage id={p.id!} /> },
  { pattern: ["schedules"], render: () => <SchedulesPage /> },
  { pattern: ["schedules", ":name"], render: (p) => <SchedulePage name={p.name!} /> },
  { pattern: ["cluster"], render: () => <ClusterPage /> },
];

const nav: Array<{ label: string; path: string; active: (path: string[]) => boolean }> = [
  { label: "Queues", path: "#/", active: (p) => p.length === 0 || p[0] === "queues" || p[0] === "jobs" },
  { label: "Workflows", path: "#/workflows", active: (p) => p[0] === "workflows" || p[0] === "instances" },
  { label: "Schedules", path: "#/schedules", active: (p) => p[0] === "schedules" },
  { label: "Cluster", path: "#/cluster", active: (p) => p[0] === "cluster" },
];

export function App() {
  const path = useHashPath();
  const auth = useAuth();
  const found = match(routes, path);
  return (
    <>
      <header>
        <a class="brand" href="#/">
          runlater
        </a>
        {auth.state === "in" && (
          <nav aria-label="Main">
            {nav.map((n) => (
              <a href={n.path} aria-current={n.active(path) ? "page" : undefined}>
                {n.label}
              </a>
            ))}
          </nav>
        )}
        {auth.state === "in" && auth.token && <WhoBadge token={auth.token} signOut={auth.signOut} />}
      </header>
      <main>
        {auth.state === "checking" ? (
          // No heading yet: a page's own heading says it has loaded.
          <section>
            <p>Connecting…</p>
            <ErrorBanner error={auth.problem} />
          </section>
        ) : auth.state === "out" ? (
          <LoginPage reason={auth.reason} signIn={auth.signIn} />
        ) : found ? (
          found.route.render(found.params)
        ) : (
          <section>
            <h1>Not found</h1>
            <p>
              No page at <code>{location.hash}</code>. <a href="#/">Back to the queues</a>.
            </p>
          </section>
        )}
      </main>
    </>
  );
}
