/**
 * Hash routes (#/queues/emails): the server serves one index.html, so no server-side
 * route is needed for any page. A page is one entry of `routes` (app.tsx); the workflow
 * pages will be more entries, and their nav links one more line each.
 */
import type { ComponentChild } from "preact";
import { useEffect, useState } from "preact/hooks";

export interface Route {
  /** Path segments; ":name" captures one segment. */
  pattern: string[];
  render: (params: Record<string, string>) => ComponentChild;
}

export function parsePath(hash: string): string[] {
  return hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

export function match(routes: Route[], path: string[]): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.pattern.length !== path.length) continue;
    const params: Record<string, string> = {};
    const fits = route.pattern.every((p, i) => {
      if (!p.startsWith(":")) return p === path[i];
      params[p.slice(1)] = path[i]!;
      return true;
    });
    if (fits) return { route, params };
  }
  return undefined;
}

export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join("/")}`;
}

export function useHashPath(): string[] {
  const [path, setPath] = useState(() => parsePath(location.hash));
  useEffect(() => {
    const onChange = () => setPath(parsePath(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return path;
}
