// Bundle one ESM file per view into src/rubriclab/static/ (no CDN imports: works offline).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const views = ["result_table", "explanation", "rubric_editor", "pairwise_view", "calibration_view", "comparison_view"];
const watch = process.argv.includes("--dev");

await build({
  entryPoints: views.map((v) => path.join(here, "src", `${v}.js`)),
  outdir: path.join(here, "..", "src", "rubriclab", "static"),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !watch,
  sourcemap: watch ? "inline" : false,
  loader: { ".css": "text" },
  legalComments: "none",
  logLevel: "info",
});
