//===- Server.h - the pps language server ---------------------------------===//
//
// A Language Server Protocol server over two file descriptors (stdin and
// stdout for `ppsc lsp`). The request thread reads messages, keeps the
// open documents, and answers hover, definition, completion and
// documentSymbol from the last finished analysis of a document; a worker
// thread re-checks a document after edits stop for DebounceMs, drops work
// whose document changed meanwhile, and publishes diagnostics. So a slow
// check (a 100k-action schedule) never holds up the editor's requests.
//
// Protocol errors get JSON-RPC answers and never end the server: a body
// that is not JSON (ParseError), a message that is not a request
// (InvalidRequest), an unknown method (MethodNotFound), bad parameters
// (InvalidParams), requests before `initialize` (ServerNotInitialized).
// The server ends on `exit` (status 0 after `shutdown`, else 1) or when the
// client closes the stream or stops reading (status 1).
//
// The process must ignore SIGPIPE (`ppsc lsp` does), so that a vanished
// client is a write error, not a signal.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/lsp/Analysis.h"

#include <memory>
#include <string>

namespace pps::lsp {

struct ServerOptions {
  AnalysisOptions Analysis;
  /// Quiet time after an edit before the document is checked again.
  unsigned DebounceMs = 150;
  /// 0: problems only; 1: also one line per analysis (with timings);
  /// 2: also every message's method.
  unsigned LogLevel = 0;
  /// Where the log goes (stderr for `ppsc lsp`; -1 = nowhere).
  int LogFd = 2;
  /// Reported as serverInfo.version.
  std::string Version = "0";
};

class Server {
public:
  Server(int InFd, int OutFd, ServerOptions Opts);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  /// Serves until `exit` or the end of the input; returns the exit status.
  /// The worker thread is told to stop but may still be finishing a check
  /// (the destructor waits for it; a process may exit at once instead).
  int run();

private:
  class Impl;
  std::unique_ptr<Impl> P;
};

} // namespace pps::lsp
