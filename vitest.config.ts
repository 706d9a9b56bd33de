import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// One config for every TypeScript suite. Tests that need a live Redis or MySQL carry a
// .redis.test.ts / .mysql.test.ts suffix (added with those stores).
export default defineConfig({
  // Tests run on the sources: @runlater/sdk resolves to sdk-ts/src through its
  // "@runlater/source" export condition (the built dist/ is for users and the bin).
  ssr: { resolve: { conditions: ["@runlater/source", ...defaultServerConditions] } },
  test: {
    include: [
      "server/test/**/*.test.ts",
      "server/ui/test/**/*.test.ts",
      "sdk-ts/test/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
