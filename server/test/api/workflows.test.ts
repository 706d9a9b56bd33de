import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { describeWorkflowService } from "./workflow-cases.js";

describeWorkflowService("memory", async () => new MemoryStore());
