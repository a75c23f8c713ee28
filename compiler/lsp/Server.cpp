//===- Server.cpp - the pps language server -------------------------------===//
//
// Two threads. The request thread (run) reads, dispatches and answers; it
// never runs the compiler. The worker takes the most urgent pending
// document (each document has at most one pending check: a newer edit
// replaces it), waits out its debounce, analyses it and publishes, unless
// the document changed or closed meanwhile (its generation moved on), in
// which case the result is dropped. Generations, documents and the queue
// share one mutex; publishing happens under it, so a result can never be
// published after the didClose or didChange that made it stale.
//
//===----------------------------------------------------------------------===//
#include "pps/lsp/Server.h"

#include "pps/frontend/Frontend.h"
#include "pps/lsp/Features.h"
#include "pps/lsp/Transport.h"

#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>
#include <unistd.h>

namespace pps::lsp {

namespace {

using Clock = std::chrono::steady_clock;
namespace json = llvm::json;

/// Deepest JSON nesting accepted (llvm::json::parse recurses).
constexpr unsigned MaxJsonDepth = 128;

/// Nesting depth of a JSON text, strings skipped. Cheap, and keeps a body
/// of a million `[` from overflowing the parser's stack.
unsigned jsonDepth(llvm::StringRef S) {
  unsigned Depth = 0, Max = 0;
  bool InString = false;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
    } else if (C == '[' || C == '{') {
      Max = std::max(Max, ++Depth);
      if (Max > MaxJsonDepth)
        return Max;
    } else if ((C == ']' || C == '}') && Depth) {
      --Depth;
    }
  }
  return Max;
}

struct TextDocumentItem {
  std::string Uri;
  int64_t Version = 0;
  std::string Text;
};
bool fromJSON(const json::Value &V, TextDocumentItem &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("uri", D.Uri) && O.mapOptional("version", D.Version) &&
         O.map("text", D.Text);
}

struct DocumentId {
  std::string Uri;
  llvm::Optional<int64_t> Version;
};
bool fromJSON(const json::Value &V, DocumentId &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("uri", D.Uri) && O.mapOptional("version", D.Version);
}

struct ContentChange {
  llvm::Optional<Range> R;
  std::string Text;
};
bool fromJSON(const json::Value &V, ContentChange &C, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.mapOptional("range", C.R) && O.map("text", C.Text);
}

struct DidOpenParams {
  TextDocumentItem Doc;
};
bool fromJSON(const json::Value &V, DidOpenParams &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("textDocument", D.Doc);
}

struct DidChangeParams {
  DocumentId Doc;
  std::vector<ContentChange> Changes;
};
bool fromJSON(const json::Value &V, DidChangeParams &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("textDocument", D.Doc) &&
         O.map("contentChanges", D.Changes);
}

struct DocumentParams {
  DocumentId Doc;
};
bool fromJSON(const json::Value &V, DocumentParams &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("textDocument", D.Doc);
}

struct PositionParams {
  DocumentId Doc;
  Position Pos;
};
bool fromJSON(const json::Value &V, PositionParams &D, json::Path P) {
  json::ObjectMapper O(V, P);
  return O && O.map("textDocument", D.Doc) && O.map("position", D.Pos);
}

/// An error answer to a request.
struct RpcError {
  ErrorCode Code;
  std::string Message;
};

} // namespace

class Server::Impl {
public:
  Impl(int InFd, int OutFd, ServerOptions Opts)
      : Reader(InFd), Writer(OutFd), Opts(std::move(Opts)) {
    Worker = std::thread([this] { workerLoop(); });
  }

  ~Impl() {
    stopWorker();
    if (Worker.joinable())
      Worker.join();
  }

  int run();

private:
  struct Document {
    std::string Text;
    std::string Path;
    int64_t Version = 0;
    uint64_t Gen = 0;
    std::shared_ptr<const Analysis> Latest;
    std::shared_ptr<const Analysis> LastParsed;
  };
  struct Job {
    std::string Text, Path;
    int64_t Version = 0;
    uint64_t Gen = 0;
    Clock::time_point Due;
  };

  void log(unsigned Level, const std::string &Msg) {
    if (Level > Opts.LogLevel || Opts.LogFd < 0)
      return;
    std::string Line = "ppsc lsp: " + Msg + "\n";
    std::lock_guard<std::mutex> Lock(LogMu);
    if (::write(Opts.LogFd, Line.data(), Line.size()) < 0)
      return; // nowhere to say so
  }

  void stopWorker() {
    {
      std::lock_guard<std::mutex> Lock(Mu);
      Stopping = true;
    }
    CV.notify_all();
  }

  // --- output ---------------------------------------------------------
  void reply(const json::Value &Id, json::Value Result) {
    Writer.write(json::Object{
        {"jsonrpc", "2.0"}, {"id", Id}, {"result", std::move(Result)}});
  }
  void replyError(const json::Value &Id, ErrorCode Code,
                  const std::string &Message) {
    log(0, fmt::format("error {}: {}", int(Code), Message));
    Writer.write(json::Object{
        {"jsonrpc", "2.0"},
        {"id", Id},
        {"error", json::Object{{"code", int(Code)},
                               {"message", json::isUTF8(Message)
                                               ? Message
                                               : json::fixUTF8(Message)}}}});
  }
  void notify(llvm::StringRef Method, json::Value Params) {
    Writer.write(json::Object{
        {"jsonrpc", "2.0"}, {"method", Method}, {"params", std::move(Params)}});
  }
  /// Caller holds Mu.
  void publish(const std::string &Uri, std::optional<int64_t> Version,
               json::Array Diags) {
    json::Object P{{"uri", Uri}, {"diagnostics", std::move(Diags)}};
    if (Version)
      P["version"] = *Version;
    notify("textDocument/publishDiagnostics", std::move(P));
  }

  // --- dispatch -------------------------------------------------------
  void handle(json::Value Msg);
  std::optional<RpcError> request(llvm::StringRef Method,
                                  const json::Value *Params,
                                  json::Value &Result);
  void notification(llvm::StringRef Method, const json::Value *Params);

  template <typename T>
  std::optional<RpcError> parse(const json::Value *Params, T &Out) {
    if (!Params)
      return RpcError{ErrorCode::InvalidParams, "missing params"};
    json::Path::Root Root("params");
    if (fromJSON(*Params, Out, Root))
      return std::nullopt;
    std::string Msg;
    llvm::raw_string_ostream OS(Msg);
    OS << Root.getError();
    OS.flush();
    return RpcError{ErrorCode::InvalidParams, Msg};
  }

  std::optional<RpcError> initialize(const json::Value *Params,
                                     json::Value &Result);
  std::string stdlibDir() const {
    return Opts.Analysis.StdlibDir.empty() ? frontend::defaultStdlibDir()
                                           : Opts.Analysis.StdlibDir;
  }

  /// The document's analyses: latest, and the last that parsed.
  bool snapshot(const std::string &Uri, std::shared_ptr<const Analysis> &Latest,
                std::shared_ptr<const Analysis> &Parsed, std::string *Text);

  // --- documents and the worker --------------------------------------
  void didOpen(const DidOpenParams &P);
  void didChange(const DidChangeParams &P);
  void didClose(const std::string &Uri);
  /// Queues a check of Uri (caller holds Mu).
  void schedule(const std::string &Uri, Document &D, unsigned DelayMs);
  void workerLoop();
  void analyseJob(const std::string &Uri, Job J);

  MessageReader Reader;
  MessageWriter Writer;
  ServerOptions Opts;
  std::mutex LogMu;

  // Request-thread state.
  bool Initialized = false, ShutdownRequested = false, ExitNow = false;
  bool Snippets = false;

  // Shared with the worker, under Mu.
  std::mutex Mu;
  std::condition_variable CV;
  std::map<std::string, Document> Docs;
  std::map<std::string, Job> Queue;
  bool Stopping = false;
  bool WarmCatalog = false;
  uint64_t NextGen = 1;

  std::thread Worker;
};

int Server::Impl::run() {
  std::string Body, Error;
  while (!ExitNow) {
    MessageReader::Status St = Reader.read(Body, Error);
    if (St == MessageReader::Status::Eof ||
        St == MessageReader::Status::Truncated) {
      log(0, St == MessageReader::Status::Eof
                 ? "the client closed the input"
                 : "the input ended inside a message");
      break;
    }
    if (St == MessageReader::Status::BadHeader) {
      replyError(nullptr, ErrorCode::ParseError,
                 "malformed message header: " + Error);
      continue;
    }
    if (St == MessageReader::Status::TooLarge) {
      replyError(nullptr, ErrorCode::InvalidRequest, Error);
      continue;
    }
    if (jsonDepth(Body) > MaxJsonDepth) {
      replyError(nullptr, ErrorCode::ParseError,
                 fmt::format("JSON nested deeper than {}", MaxJsonDepth));
      continue;
    }
    llvm::Expected<json::Value> V = json::parse(Body);
    if (!V) {
      replyError(nullptr, ErrorCode::ParseError,
                 "invalid JSON: " + llvm::toString(V.takeError()));
      continue;
    }
    handle(std::move(*V));
    if (Writer.failed()) {
      log(0, "the client stopped reading");
      break;
    }
  }
  stopWorker();
  return ExitNow && ShutdownRequested ? 0 : 1;
}

void Server::Impl::handle(json::Value Msg) {
  json::Object *O = Msg.getAsObject();
  if (!O) {
    replyError(nullptr, ErrorCode::InvalidRequest,
               "a message must be a JSON object (batches are not used by "
               "the Language Server Protocol)");
    return;
  }
  const json::Value *Id = O->get("id");
  if (Id && Id->kind() != json::Value::Number &&
      Id->kind() != json::Value::String && Id->kind() != json::Value::Null) {
    replyError(nullptr, ErrorCode::InvalidRequest,
               "id must be a number or a string");
    return;
  }
  const json::Value *MethodV = O->get("method");
  if (!MethodV) {
    if (Id && (O->get("result") || O->get("error")))
      return; // a response to a request we never send: ignore
    replyError(Id ? *Id : json::Value(nullptr), ErrorCode::InvalidRequest,
               "message has no method");
    return;
  }
  llvm::Optional<llvm::StringRef> Method = MethodV->getAsString();
  if (!Method) {
    replyError(Id ? *Id : json::Value(nullptr), ErrorCode::InvalidRequest,
               "method must be a string");
    return;
  }
  const json::Value *Params = O->get("params");
  if (Params && Params->kind() == json::Value::Null)
    Params = nullptr; // some clients send "params": null for none
  if (Params && Params->kind() != json::Value::Object &&
      Params->kind() != json::Value::Array) {
    if (Id)
      replyError(*Id, ErrorCode::InvalidParams,
                 "params must be an object or an array");
    else
      log(0, fmt::format("{}: params must be an object or an array",
                         Method->str()));
    return;
  }
  log(2, fmt::format("<- {}{}", Method->str(), Id ? " (request)" : ""));
  if (!Id) {
    try {
      notification(*Method, Params);
    } catch (...) {
      log(0, fmt::format("{}: internal error", Method->str()));
    }
    return;
  }
  json::Value Result = nullptr;
  std::optional<RpcError> Err;
  try {
    Err = request(*Method, Params, Result);
  } catch (std::exception &E) {
    Err = RpcError{ErrorCode::InternalError, E.what()};
  } catch (...) {
    Err = RpcError{ErrorCode::InternalError, "internal error"};
  }
  if (Err)
    replyError(*Id, Err->Code, Err->Message);
  else
    reply(*Id, std::move(Result));
}

std::optional<RpcError> Server::Impl::initialize(const json::Value *Params,
                                                 json::Value &Result) {
  if (!Params || !Params->getAsObject())
    return RpcError{ErrorCode::InvalidParams,
                    "initialize takes an InitializeParams object"};
  const json::Object &P = *Params->getAsObject();
  if (const json::Object *Caps = P.getObject("capabilities"))
    if (const json::Object *TD = Caps->getObject("textDocument"))
      if (const json::Object *C = TD->getObject("completion"))
        if (const json::Object *CI = C->getObject("completionItem"))
          Snippets = CI->getBoolean("snippetSupport").getValueOr(false);
  // initializationOptions: {"stdlib": DIR, "importPaths": [DIR, ...]}.
  if (const json::Object *IO = P.getObject("initializationOptions")) {
    if (auto S = IO->getString("stdlib"))
      Opts.Analysis.StdlibDir = S->str();
    if (const json::Array *Dirs = IO->getArray("importPaths"))
      for (const json::Value &D : *Dirs)
        if (auto S = D.getAsString())
          Opts.Analysis.ImportPaths.push_back(S->str());
  }
  Initialized = true;
  {
    // The worker reads the stdlib's schedules for completion now, before
    // any document: only the worker runs the front end.
    std::lock_guard<std::mutex> Lock(Mu);
    WarmCatalog = true;
  }
  CV.notify_all();
  json::Object Caps{
      {"positionEncoding", "utf-16"},
      {"textDocumentSync",
       json::Object{{"openClose", true}, {"change", 2}, {"save", false}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"completionProvider",
       json::Object{{"triggerCharacters", json::Array{" ", "."}},
                    {"resolveProvider", false}}},
      {"documentSymbolProvider", true},
      // No documentFormattingProvider: the only printer prints the
      // lowered IR, which drops comments and the program's structure.
  };
  Result =
      json::Object{{"capabilities", std::move(Caps)},
                   {"serverInfo", json::Object{{"name", "ppsc lsp"},
                                               {"version", Opts.Version}}}};
  return std::nullopt;
}

bool Server::Impl::snapshot(const std::string &Uri,
                            std::shared_ptr<const Analysis> &Latest,
                            std::shared_ptr<const Analysis> &Parsed,
                            std::string *Text) {
  std::lock_guard<std::mutex> Lock(Mu);
  auto It = Docs.find(Uri);
  if (It == Docs.end())
    return false;
  Latest = It->second.Latest;
  Parsed = It->second.LastParsed;
  if (Text)
    *Text = It->second.Text;
  return true;
}

std::optional<RpcError> Server::Impl::request(llvm::StringRef Method,
                                              const json::Value *Params,
                                              json::Value &Result) {
  if (Method == "initialize") {
    if (Initialized)
      return RpcError{ErrorCode::InvalidRequest, "initialize sent twice"};
    return initialize(Params, Result);
  }
  if (!Initialized)
    return RpcError{ErrorCode::ServerNotInitialized,
                    "the first request must be initialize"};
  if (ShutdownRequested)
    return RpcError{ErrorCode::InvalidRequest,
                    "the server is shutting down; only exit is accepted"};
  if (Method == "shutdown") {
    ShutdownRequested = true;
    Result = nullptr;
    return std::nullopt;
  }
  if (Method == "textDocument/hover" || Method == "textDocument/definition") {
    PositionParams P;
    if (auto E = parse(Params, P))
      return E;
    std::shared_ptr<const Analysis> Latest, Parsed;
    if (!snapshot(P.Doc.Uri, Latest, Parsed, nullptr) || !Parsed) {
      Result = nullptr;
      return std::nullopt;
    }
    Result = Method == "textDocument/hover" ? hover(*Parsed, P.Pos)
                                            : definition(*Parsed, P.Pos);
    return std::nullopt;
  }
  if (Method == "textDocument/completion") {
    PositionParams P;
    if (auto E = parse(Params, P))
      return E;
    std::shared_ptr<const Analysis> Latest, Parsed;
    std::string Text;
    if (!snapshot(P.Doc.Uri, Latest, Parsed, &Text)) {
      Result = json::Object{{"isIncomplete", false}, {"items", json::Array{}}};
      return std::nullopt;
    }
    // The stdlib's schedules, once the worker has read them (at start-up).
    static const std::vector<StdlibSchedule> None;
    const std::vector<StdlibSchedule> *Stdlib =
        stdlibCatalogIfReady(stdlibDir());
    Result = completion(Parsed.get(), Text, P.Pos, Stdlib ? *Stdlib : None,
                        Snippets);
    return std::nullopt;
  }
  if (Method == "textDocument/documentSymbol") {
    DocumentParams P;
    if (auto E = parse(Params, P))
      return E;
    std::shared_ptr<const Analysis> Latest, Parsed;
    if (!snapshot(P.Doc.Uri, Latest, Parsed, nullptr) || !Parsed) {
      Result = json::Array{};
      return std::nullopt;
    }
    Result = documentSymbols(*Parsed);
    return std::nullopt;
  }
  return RpcError{ErrorCode::MethodNotFound,
                  fmt::format("method '{}' is not supported", Method.str())};
}

void Server::Impl::notification(llvm::StringRef Method,
                                const json::Value *Params) {
  if (Method == "exit") {
    ExitNow = true;
    return;
  }
  if (!Initialized || ShutdownRequested)
    return; // dropped, as the protocol says
  auto Bad = [&](const std::optional<RpcError> &E) {
    if (!E)
      return false;
    log(0, fmt::format("{}: {}", Method.str(), E->Message));
    return true;
  };
  if (Method == "textDocument/didOpen") {
    DidOpenParams P;
    if (!Bad(parse(Params, P)))
      didOpen(P);
  } else if (Method == "textDocument/didChange") {
    DidChangeParams P;
    if (!Bad(parse(Params, P)))
      didChange(P);
  } else if (Method == "textDocument/didClose") {
    DocumentParams P;
    if (!Bad(parse(Params, P)))
      didClose(P.Doc.Uri);
  }
  // initialized, didSave, $/cancelRequest (requests are answered at
  // once), $/setTrace, workspace/didChangeConfiguration and unknown
  // notifications need nothing.
}

void Server::Impl::didOpen(const DidOpenParams &P) {
  std::lock_guard<std::mutex> Lock(Mu);
  Document &D = Docs[P.Doc.Uri];
  D.Text = P.Doc.Text;
  D.Version = P.Doc.Version;
  D.Path = uriToPath(P.Doc.Uri);
  if (D.Path.empty())
    D.Path = P.Doc.Uri; // untitled: documents: relative imports from here
  schedule(P.Doc.Uri, D, 0);
}

void Server::Impl::didChange(const DidChangeParams &P) {
  std::lock_guard<std::mutex> Lock(Mu);
  auto It = Docs.find(P.Doc.Uri);
  if (It == Docs.end()) {
    log(0, "didChange for a document that is not open: " + P.Doc.Uri);
    return;
  }
  Document &D = It->second;
  for (const ContentChange &C : P.Changes) {
    if (C.R)
      applyEdit(D.Text, *C.R, C.Text);
    else
      D.Text = C.Text;
  }
  if (P.Doc.Version)
    D.Version = *P.Doc.Version;
  schedule(P.Doc.Uri, D, Opts.DebounceMs);
}

void Server::Impl::didClose(const std::string &Uri) {
  std::lock_guard<std::mutex> Lock(Mu);
  Docs.erase(Uri);
  Queue.erase(Uri);
  // Clear what the editor shows for it; a check under way is now stale.
  publish(Uri, std::nullopt, json::Array{});
}

void Server::Impl::schedule(const std::string &Uri, Document &D,
                            unsigned DelayMs) {
  D.Gen = NextGen++;
  Job &J = Queue[Uri];
  J.Text = D.Text;
  J.Path = D.Path;
  J.Version = D.Version;
  J.Gen = D.Gen;
  J.Due = Clock::now() + std::chrono::milliseconds(DelayMs);
  CV.notify_all();
}

void Server::Impl::workerLoop() {
  std::unique_lock<std::mutex> Lock(Mu);
  while (!Stopping) {
    if (WarmCatalog) {
      WarmCatalog = false;
      std::string Dir = stdlibDir();
      Lock.unlock();
      stdlibCatalog(Dir);
      Lock.lock();
      continue;
    }
    if (Queue.empty()) {
      CV.wait(Lock);
      continue;
    }
    auto Next = Queue.begin();
    for (auto It = Queue.begin(); It != Queue.end(); ++It)
      if (It->second.Due < Next->second.Due)
        Next = It;
    if (Clock::now() < Next->second.Due) {
      CV.wait_until(Lock, Next->second.Due);
      continue; // an edit may have pushed it back, or something came first
    }
    std::string Uri = Next->first;
    Job J = std::move(Next->second);
    Queue.erase(Next);
    Lock.unlock();
    try {
      analyseJob(Uri, std::move(J));
    } catch (...) {
      log(0, "internal error while checking " + Uri);
    }
    Lock.lock();
  }
}

void Server::Impl::analyseJob(const std::string &Uri, Job J) {
  // Stale: the document changed or closed since the job was queued.
  auto StaleLocked = [&] {
    auto It = Docs.find(Uri);
    return Stopping || It == Docs.end() || It->second.Gen != J.Gen;
  };
  auto Stale = [&] {
    std::lock_guard<std::mutex> Lock(Mu);
    return StaleLocked();
  };
  auto T0 = Clock::now();
  std::shared_ptr<Analysis> A =
      analyze(Uri, J.Path, std::move(J.Text), J.Version, Opts.Analysis, Stale);
  if (!A) {
    log(1, fmt::format("{} v{}: superseded, dropped", Uri, J.Version));
    return;
  }
  double Ms =
      std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  {
    std::lock_guard<std::mutex> Lock(Mu);
    if (StaleLocked()) {
      log(1, fmt::format("{} v{}: superseded after {:.1f} ms, dropped", Uri,
                         J.Version, Ms));
      return;
    }
    publish(Uri, J.Version, A->Diagnostics);
    Document &D = Docs[Uri];
    D.Latest = A;
    if (A->parsed())
      D.LastParsed = A;
  }
  log(1, fmt::format("{} v{}: {} diagnostics in {:.1f} ms (check {:.1f}, "
                     "evaluate {:.1f}, passes {:.1f}, index {:.1f})",
                     Uri, J.Version, A->Diagnostics.size(), Ms, A->Times.Check,
                     A->Times.Evaluate, A->Times.Passes, A->Times.Index));
  simulate(*A, Stale);
  log(1, fmt::format("{} v{}: simulated in {:.1f} ms", Uri, J.Version,
                     A->Times.Simulate));
}

Server::Server(int InFd, int OutFd, ServerOptions Opts)
    : P(std::make_unique<Impl>(InFd, OutFd, std::move(Opts))) {}

Server::~Server() = default;

int Server::run() { return P->run(); }

} // namespace pps::lsp
