// Runs the Khronos glTF-Validator (npm package gltf-validator, installed by tools/install-deps.sh into
// tools/node) on each file given; prints "FILE: E errors, W warnings, I infos, H hints" and every error
// and warning, and exits 1 when any file has an error or a warning, 2 when the validator is missing.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
let validator;
try {
  validator = require(join(dirname(fileURLToPath(import.meta.url)), 'node/node_modules/gltf-validator'));
} catch (e) {
  console.log('gltf-validator is not installed (tools/install-deps.sh installs it)');
  process.exit(2);
}
let bad = false;
for (const file of process.argv.slice(2)) {
  const bytes = new Uint8Array(await readFile(file));
  const report = await validator.validateBytes(bytes, { maxIssues: 0, uri: file });
  const n = report.issues;
  console.log(`${file}: ${n.numErrors} errors, ${n.numWarnings} warnings, ${n.numInfos} infos, ${n.numHints} hints`);
  for (const m of n.messages)
    if (m.severity <= 1 || process.env.GLTF_VALIDATE_ALL)
      console.log(`  ${['error', 'warning', 'info', 'hint'][m.severity]} ${m.code} ${m.pointer ?? ''}: ${m.message}`);
  if (n.numErrors || n.numWarnings) bad = true;
}
process.exit(bad ? 1 : 0);
