// Build the modeler page's bundle into webapp/static/modeler/ (not in git): `npm run build`,
// run by scripts/setup.sh after `npm ci`. The bpmnlint configuration (.bpmnlintrc) is packed
// first with bpmnlint-pack-config, then esbuild bundles the script and the styles.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const out = join(root, 'webapp', 'static', 'modeler');
mkdirSync(out, { recursive: true });

execFileSync(join(root, 'node_modules', '.bin', 'bpmnlint-pack-config'),
  [ '-c', join(here, '.bpmnlintrc'), '-o', join(here, 'packed-config.js'), '-t', 'es' ], { stdio: 'inherit' });

await esbuild.build({
  entryPoints: { modeler: join(here, 'index.js') },
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
