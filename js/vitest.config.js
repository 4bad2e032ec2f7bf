import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
  },
  // the views import their stylesheet as text (esbuild's "text" loader); do the same here
  plugins: [
    {
      name: "css-as-text",
      enforce: "pre",
      async load(id) {
        if (id.endsWith(".css")) {
          const { readFile } = await import("node:fs/promises");
          return `export default ${JSON.stringify(await readFile(id, "utf8"))};`;
        }
      },
    },
  ],
});
