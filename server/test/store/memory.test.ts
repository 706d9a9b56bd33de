import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { exerciseScheduleStore, exerciseStore, exerciseWorkflowStore } from "../storetest/index.js";

exerciseStore("memory", async () => new MemoryStore());
exerciseWorkflowStore("memory", async () => new MemoryStore());
exerciseScheduleStore("memory", async () => new MemoryStore());
