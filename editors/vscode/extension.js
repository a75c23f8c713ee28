// extension.js - the VS Code client of the pps language server.
//
// Starts `ppsc lsp` (pps.server.path, pps.server.extraArgs) for .pps
// files; everything else (diagnostics, hover, definition, completion,
// outline) comes from the server over the Language Server Protocol.
'use strict';

const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('pps');
  const command = config.get('server.path') || 'ppsc';
  const args = ['lsp'].concat(config.get('server.extraArgs') || []);
  const stdlib = config.get('stdlib') || '';
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args: args.concat(['--log-level=2']), transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'pps' },
      { scheme: 'untitled', language: 'pps' },
    ],
    initializationOptions: stdlib ? { stdlib } : {},
  };
  client = new LanguageClient('pps', 'pps language server', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('pps'))
        vscode.window.showInformationMessage('pps: reload the window to restart the language server with the new settings.');
    }));
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
