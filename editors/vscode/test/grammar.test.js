// grammar.test.js - the TextMate grammar against every .pps file of stdlib/
// and examples/, tokenised with vscode-textmate and vscode-oniguruma (the
// engine VS Code uses). Checks, per file: every non-blank character gets a
// scope of its own (the grammar knows every construct), the tokeniser ends
// each file outside any comment or string (no runaway begin/end rule),
// keywords are never taken for plain names and `F3@5` literals are actions;
// then spot checks on a sample. Exit 0 on success, 1 on failure, 77 (skip,
// for ctest) when node_modules is missing: run `npm ci` here first.
'use strict';

const fs = require('fs');
const path = require('path');

const here = __dirname;
const root = path.resolve(here, '..', '..', '..');
let vsctm, oniguruma;
try {
  vsctm = require('vscode-textmate');
  oniguruma = require('vscode-oniguruma');
} catch (e) {
  console.log('skipped: vscode-textmate / vscode-oniguruma are not installed; ' +
              'run `npm ci` in editors/vscode/test (see docs/editors.md)');
  process.exit(77);
}

const KEYWORDS = new Set([
  'import', 'schedule', 'fn', 'pipeline', 'let', 'for', 'while', 'break',
  'continue', 'in', 'if', 'else', 'rank', 'return', 'assert', 'true', 'false',
  'overlap', 'send', 'recv', 'unshard', 'reshard', 'reduce_grad', 'idle']);

function ppsFiles(dir) {
  const out = [];
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) out.push(...ppsFiles(p));
    else if (ent.name.endsWith('.pps')) out.push(p);
  }
  return out.sort();
}

async function loadGrammar() {
  const wasm = fs.readFileSync(path.join(path.dirname(
    require.resolve('vscode-oniguruma')), 'onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.pps') return null;
      const file = path.join(here, '..', 'syntaxes', 'pps.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  return registry.loadGrammar('source.pps');
}

/// Tokens of a text: [{line, text, scopes}], and the final rule stack.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const tokens = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens)
      tokens.push({ line: i + 1, col: t.startIndex + 1,
                    text: line.substring(t.startIndex, t.endIndex),
                    scopes: t.scopes });
    stack = r.ruleStack;
  });
  return { tokens, stack };
}

const failures = [];
function fail(msg) { failures.push(msg); }

function inCommentOrString(t) {
  return t.scopes.some((s) => s.startsWith('comment.') || s.startsWith('string.'));
}

function checkFile(grammar, file) {
  const rel = path.relative(root, file);
  const { tokens, stack } = tokenize(grammar, fs.readFileSync(file, 'utf8'));
  for (const t of tokens) {
    if (/^\s*$/.test(t.text)) continue;
    const where = `${rel}:${t.line}:${t.col}`;
    if (t.scopes.length < 2)
      fail(`${where}: '${t.text}' has no scope but source.pps`);
    if (inCommentOrString(t)) continue;
    const word = t.text.trim();
    if (KEYWORDS.has(word) && t.scopes.some((s) =>
        s.startsWith('variable.other') || s.startsWith('entity.name.function.call')))
      fail(`${where}: keyword '${word}' scoped as a name: ${t.scopes.join(' ')}`);
  }
  // Every F3@5-style literal outside comments is an action.
  for (const t of tokens) {
    if (inCommentOrString(t)) continue;
    if (/^[FIWB]$/.test(t.text) && !t.scopes.includes('support.type.action.pps'))
      fail(`${rel}:${t.line}:${t.col}: '${t.text}' is not an action: ${t.scopes.join(' ')}`);
  }
  const depth = typeof stack.depth === 'number' ? stack.depth : 1;
  if (depth !== 1)
    fail(`${rel}: ends inside a begin/end rule (depth ${depth}): an unclosed comment or string`);
  return tokens.length;
}

function scopeOf(tokens, needle, nth = 0) {
  let seen = 0;
  for (const t of tokens)
    if (t.text === needle && seen++ === nth) return t.scopes;
  return null;
}

function spotChecks(grammar) {
  const sample = [
    'import std.common;',
    '/// docs',
    'schedule mine(k = 1) {',
    '  for r in 0..P { rank r { F(0)@r; } }',
    '}',
    'pipeline demo {',
    '  ranks 2; stages 2 placement loop; microbatches 2;',
    '  comm { latency 0.05; bandwidth 50 GB/s; activation 64 MiB; }',
    '  rank 0: F3 send F3@5 -> 1 /* block */ B3;',
    '  schedule zb_v(); // a use, not a definition',
    '}',
  ].join('\n');
  const { tokens } = tokenize(grammar, sample);
  const expect = (text, scope, nth = 0) => {
    const s = scopeOf(tokens, text, nth);
    if (!s || !s.includes(scope))
      fail(`sample: '${text}' should have ${scope}, has ${s ? s.join(' ') : 'no token'}`);
  };
  expect('import', 'keyword.control.import.pps');
  expect('std.common', 'entity.name.namespace.pps');
  expect(' docs', 'comment.block.documentation.pps');
  expect('schedule', 'storage.type.function.pps');
  expect('mine', 'entity.name.function.pps');
  expect('for', 'keyword.control.loop.pps');
  expect('P', 'variable.language.topology.pps');
  expect('rank', 'keyword.other.rank.pps');
  expect('F', 'support.type.action.pps');
  expect('pipeline', 'storage.type.pipeline.pps');
  expect('demo', 'entity.name.type.pipeline.pps');
  expect('ranks', 'keyword.other.pipeline-item.pps');
  expect('0.05', 'constant.numeric.float.pps');
  expect('MiB', 'keyword.other.unit.pps');
  expect('send', 'keyword.other.action.pps');
  expect('3', 'constant.numeric.microbatch.pps');
  expect('5', 'constant.numeric.stage.pps');
  expect('->', 'keyword.operator.arrow.pps');
  expect(' block ', 'comment.block.pps');
  expect('zb_v', 'support.function.schedule.pps');
  expect(' a use, not a definition', 'comment.line.double-slash.pps');
}

(async () => {
  const grammar = await loadGrammar();
  const files = [...ppsFiles(path.join(root, 'stdlib')),
                 ...ppsFiles(path.join(root, 'examples'))];
  if (files.length < 10) fail(`expected the stdlib and examples, found ${files.length} files`);
  let n = 0;
  for (const f of files) n += checkFile(grammar, f);
  spotChecks(grammar);
  for (const f of failures) console.log('FAIL: ' + f);
  console.log(`${files.length} files, ${n} tokens: ` +
              `${failures.length ? failures.length + ' failures' : 'grammar ok'}`);
  process.exit(failures.length ? 1 : 0);
})().catch((e) => { console.log('FAIL: ' + (e.stack || e)); process.exit(1); });
