/**
 * The dashboard shell: header, navigation, and the page the hash names. Pages are entries
 * of `routes`; `nav` lists the top-level ones. Workflows (definitions, instances, graphs,
 * schedules) will be more entries of both, and a login page one more (docs/dashboard.md).
 */
import { ClusterPage } from "./pages/cluster.js";
import { JobPage } from "./pages/job.js";
import { OverviewPage } from "./pages/overview.js";
import { QueuePage } from "./pages/queue.js";
import { match, type Route, useHashPath } from "./router.js";

const routes: Route[] = [
  { pattern: [], render: () => <OverviewPage /> },
  { pattern: ["queues", ":name"], render: (p) => <QueuePage name={p.name!} /> },
  { pattern: ["jobs", ":id"], render: (p) => <JobPage id={p.id!} /> },
  { pattern: ["cluster"], render: () => <ClusterPage /> },
];

const nav: Array<{ label: string; path: string; active: (path: string[]) => boolean }> = [
  { label: "Queues", path: "#/", active: (p) => p.length === 0 || p[0] === "queues" || p[0] === "jobs" },
  { label: "Cluster", path: "#/cluster", active: (p) => p[0] === "cluster" },
];

export function App() {
  const path = useHashPath();
  const found = match(routes, path);
  return (
    <>
      <header>
        <a class="brand" href="#/">
          runlater
        </a>
        <nav aria-label="Main">
          {nav.map((n) => (
            <a href={n.path} aria-current={n.active(path) ? "page" : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
      </header>
      <main>
        {found ? (
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
