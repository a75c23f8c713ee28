// extension.test.js - the VS Code extension's manifest and client, without
// VS Code: package.json's contributions point at files that exist and agree
// with the grammar and the language configuration, and activate() starts
// `ppsc lsp` (or the configured path and arguments) for pps documents.
// `vscode` and `vscode-languageclient/node` are stubbed (they exist only
// inside VS Code and after `npm install` of the extension). Needs node only.
'use strict';

const assert = require('assert');
const fs = require('fs');
const Module = require('module');
const path = require('path');

const ext = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));

// Manifest.
const lang = pkg.contributes.languages.find((l) => l.id === 'pps');
assert(lang && lang.extensions.includes('.pps'), 'the pps language for .pps files');
const langConf = JSON.parse(fs.readFileSync(path.join(ext, lang.configuration), 'utf8'));
assert.strictEqual(langConf.comments.lineComment, '//');
assert.deepStrictEqual(langConf.comments.blockComment, ['/*', '*/']);
for (const pair of ['{}', '[]', '()'])
  assert(langConf.brackets.some((b) => b[0] === pair[0] && b[1] === pair[1]), pair);
const g = pkg.contributes.grammars.find((x) => x.language === 'pps');
const grammar = JSON.parse(fs.readFileSync(path.join(ext, g.path), 'utf8'));
assert.strictEqual(grammar.scopeName, g.scopeName, 'grammar scope name');
for (const [k, v] of Object.entries(pkg.contributes.configuration.properties))
  assert(k.startsWith('pps.') && 'default' in v, k);
assert(fs.existsSync(path.join(ext, pkg.main)), 'main script exists');
assert(pkg.dependencies['vscode-languageclient'], 'depends on the LSP client');

// activate() with stubs.
const settings = { 'server.path': '/opt/pps/bin/ppsc', 'server.extraArgs': ['-I', 'x'], stdlib: '/s' };
let created = null;
const stubs = {
  vscode: {
    workspace: {
      getConfiguration: (section) => {
        assert.strictEqual(section, 'pps');
        return { get: (k) => settings[k] };
      },
      onDidChangeConfiguration: () => ({ dispose() {} }),
    },
    window: { showInformationMessage() {} },
  },
  'vscode-languageclient/node': {
    TransportKind: { stdio: 0 },
    LanguageClient: class {
      constructor(id, name, serverOptions, clientOptions) {
        created = { id, name, serverOptions, clientOptions, started: false };
      }
      start() { created.started = true; return Promise.resolve(); }
      stop() { return Promise.resolve(); }
    },
  },
};
const origLoad = Module._load;
Module._load = function (request, parent, isMain) {
  if (request in stubs) return stubs[request];
  return origLoad.call(this, request, parent, isMain);
};
const extension = require(path.join(ext, pkg.main));
const subscriptions = [];
Promise.resolve(extension.activate({ subscriptions })).then(() => {
  assert(created && created.started, 'a client was started');
  assert.strictEqual(created.serverOptions.run.command, '/opt/pps/bin/ppsc');
  assert.deepStrictEqual(created.serverOptions.run.args, ['lsp', '-I', 'x']);
  assert(created.clientOptions.documentSelector.every((d) => d.language === 'pps'));
  assert.deepStrictEqual(created.clientOptions.initializationOptions, { stdlib: '/s' });
  assert.strictEqual(subscriptions.length, 1);
  return extension.deactivate();
}).then(() => {
  console.log('extension ok');
}).catch((e) => {
  console.log('FAIL: ' + (e.stack || e));
  process.exit(1);
});
