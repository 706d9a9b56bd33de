import { render } from "preact";
import { App } from "./app.js";
import "./style.css";

const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading…" line index.html shows until this script runs
render(<App />, root);
