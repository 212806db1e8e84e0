// Build the modeler page's bundle into webapp/static/modeler/ (not in git): `npm run build`,
// run by scripts/setup.sh after `npm ci`. The bpmnlint configuration (.bpmnlintrc) is packed
// first with bpmnlint-pack-config, then esbuild bundles the script and the styles.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const out = join(root, 'webapp', 'static', 'modeler');
mkdirSync(out, { recursive: true });

execFileSync(join(root, 'node_modules', '.bin', 'bpmnlint-pack-config'),
  [ '-c', join(here, '.bpmnlintrc'), '-o', join(here, 'packed-config.js'), '-t', 'es' ], { stdio: 'inherit' });

// bpmn-js-properties-panel writes its container as HTML with a style attribute, which the page's
// Content-Security-Policy (style-src 'self', no inline style) refuses with a console error: the
// attribute is taken out here, and modeler.css gives the container the same height. The build fails
// if a new version of the package no longer has that markup, so the edit is never silently lost.
const INLINE_STYLE = '<div style="height: 100%" tabindex="-1" class="bio-properties-panel-container">';
const noInlineStyle = {
  name: 'rule130-no-inline-style',
  setup(build) {
    build.onLoad({ filter: /bpmn-js-properties-panel[\\/]dist[\\/]index\.esm\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes(INLINE_STYLE)) {
        throw new Error(`${args.path} no longer writes ${INLINE_STYLE}: check its CSP edit in build.mjs`);
      }
      return { contents: source.replace(INLINE_STYLE, '<div tabindex="-1" class="bio-properties-panel-container">'),
        loader: 'js' };
    });
  }
};

await esbuild.build({
  entryPoints: { modeler: join(here, 'index.js') },
  plugins: [ noInlineStyle ],
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'iife',
  target: [ 'es2020' ],
  outdir: out,
  logLevel: 'warning',
  legalComments: 'linked'
});
await esbuild.build({
  entryPoints: { modeler: join(here, 'modeler.css') },
  bundle: true,
  minify: true,
  outdir: out,
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.eot': 'file', '.svg': 'file' },
  logLevel: 'warning'
});
console.log(`modeler bundle built in ${out}`);
