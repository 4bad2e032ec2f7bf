// Bundle one ESM file per view into src/rubriclab/static/ (no CDN imports: works offline), and
// the views' one stylesheet as static/views.css (shipped through anywidget's `_css`, so the page
// gets it once per view class instead of every bundle carrying it as a string).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const views = ["result_table", "explanation", "rubric_editor", "pairwise_view", "calibration_view", "comparison_view", "review_page", "workbench"];
const watch = process.argv.includes("--dev");

const outdir = path.join(here, "..", "src", "rubriclab", "static");

await build({
  entryPoints: views.map((v) => path.join(here, "src", `${v}.js`)),
  outdir,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !watch,
  sourcemap: watch ? "inline" : false,
  legalComments: "none",
  logLevel: "info",
});

await build({
  entryPoints: [path.join(here, "src", "lib", "styles.css")],
  outfile: path.join(outdir, "views.css"),
  bundle: true,
  minify: !watch,
  legalComments: "none",
  logLevel: "info",
});
