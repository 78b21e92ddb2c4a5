// The lexicons in @atproto/lex's schema tooling: `lex build` generates a
// TypeScript client from them (refusing invalid lexicons), and a frontend's
// use of it (client_example.ts) type-checks with tsc in strict mode. A
// misuse (a wrong parameter type, a field the answer does not have) must
// fail to compile, so that the check is one that can fail.
// Usage: node check_generated_client.mjs <lexicon folder>
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const lexicons = path.resolve(process.argv[2]);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bulleted-lex-'));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);
const compile = (file) => {
  fs.writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
      skipLibCheck: true, typeRoots: [path.join(here, 'node_modules', '@types')] },
    files: [path.join('src', file)],
  }));
  try {
    execFileSync(bin('tsc'), ['-p', work], { encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (err) {
    return `${err.stdout}${err.stderr}`;
  }
};
try {
  fs.symlinkSync(path.join(here, 'node_modules'), path.join(work, 'node_modules'));
  fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ type: 'module' }));
  execFileSync(bin('lex'), ['build', '--lexicons', lexicons, '--out', path.join(work, 'src', 'lexicons'), '--clear'],
    { cwd: work, encoding: 'utf8', stdio: 'pipe' });
  fs.copyFileSync(path.join(here, 'client_example.ts'), path.join(work, 'src', 'client_example.ts'));
  const errors = compile('client_example.ts');
  if (errors) {
    console.error(`the example does not compile against the generated client:\n${errors}`);
    process.exit(1);
  }
  const example = fs.readFileSync(path.join(here, 'client_example.ts'), 'utf8');
  const misuses = [
    ['a number for a string parameter', example.replace('params: { repo, limit: 100, cursor }', 'params: { repo, limit: 100, cursor: 7 }')],
    ['a field NodeView does not have', example.replace('node.completed ?', 'node.done ?')],
    ['a null parent', example.replace('const parent: string | undefined = node.parent', 'const parent: null = node.parent')],
  ];
  for (const [what, source] of misuses) {
    fs.writeFileSync(path.join(work, 'src', 'misuse.ts'), source);
    if (!compile('misuse.ts')) {
      console.error(`${what} compiled: the generated client checks nothing`);
      process.exit(1);
    }
  }
  console.log(`generated client compiles (${fs.readdirSync(path.join(work, 'src', 'lexicons', 'app', 'bulleted')).length} files); ${misuses.length} misuses refused`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
