import { defineConfig } from "vitest/config";

// One config for every TypeScript suite. Tests that need a live Redis or MySQL carry a
// .redis.test.ts / .mysql.test.ts suffix (added with those stores).
export default defineConfig({
  test: {
    include: [
      "server/test/**/*.test.ts",
      "server/ui/test/**/*.test.ts",
      "sdk-ts/test/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
