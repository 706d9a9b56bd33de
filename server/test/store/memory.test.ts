import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { exerciseStore } from "../storetest/index.js";

exerciseStore("memory", async () => new MemoryStore());
