//===- LspTest.cpp - the language server library: framing, text, analysis ===//
//
// The pieces under the server, tested directly: the Content-Length reader
// on hostile byte streams, UTF-16 positions and incremental edits, URIs,
// the analysis of a document (diagnostics relocated from the stdlib,
// index of names and actions) and the in-process server over pipes.
//
//===----------------------------------------------------------------------===//
#include "pps/lsp/Analysis.h"
#include "pps/lsp/Features.h"
#include "pps/lsp/Server.h"
#include "pps/lsp/Text.h"
#include "pps/lsp/Transport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>
#include <unistd.h>

using namespace pps;
using namespace pps::lsp;

namespace {

/// A reader over a pipe pre-filled with Bytes (then closed).
struct PipeReader {
  int Fds[2];
  std::unique_ptr<MessageReader> R;
  PipeReader(const std::string &Bytes, size_t MaxBody = 1 << 20) {
    EXPECT_EQ(::pipe(Fds), 0);
    std::thread W([Fd = Fds[1], Bytes] {
      size_t Off = 0;
      while (Off < Bytes.size()) {
        ssize_t N = ::write(Fd, Bytes.data() + Off, Bytes.size() - Off);
        if (N <= 0)
          break;
        Off += size_t(N);
      }
      ::close(Fd);
    });
    W.detach();
    R = std::make_unique<MessageReader>(Fds[0], MaxBody);
  }
  ~PipeReader() { ::close(Fds[0]); }
  MessageReader::Status next(std::string &Body) {
    std::string Err;
    return R->read(Body, Err);
  }
};

using St = MessageReader::Status;

TEST(LspTransport, ReadsFramedMessages) {
  PipeReader P("Content-Length: 2\r\n\r\n{}"
               "\r\ncontent-length:3\r\nContent-Type: x\r\n\r\n[1]");
  std::string B;
  EXPECT_EQ(P.next(B), St::Message);
  EXPECT_EQ(B, "{}");
  EXPECT_EQ(P.next(B), St::Message);
  EXPECT_EQ(B, "[1]");
  EXPECT_EQ(P.next(B), St::Eof);
}

TEST(LspTransport, SkipsGarbageAndOversizedBodies) {
  PipeReader P("garbage line\r\n\r\n"
               "Content-Length: x\r\n\r\n"
               "Content-Length: 10\r\n\r\n0123456789"
               "Content-Length: 1\r\n\r\n7",
               /*MaxBody=*/5);
  std::string B;
  EXPECT_EQ(P.next(B), St::BadHeader);
  EXPECT_EQ(P.next(B), St::BadHeader);
  EXPECT_EQ(P.next(B), St::TooLarge);
  EXPECT_EQ(P.next(B), St::Message);
  EXPECT_EQ(B, "7");
  EXPECT_EQ(P.next(B), St::Eof);
}

TEST(LspTransport, TruncatedStreams) {
  std::string B;
  EXPECT_EQ(PipeReader("Content-Length: 5\r\n\r\n{}").next(B), St::Truncated);
  EXPECT_EQ(PipeReader("Content-Len").next(B), St::Truncated);
  EXPECT_EQ(PipeReader("").next(B), St::Eof);
  // An endless header line is bounded, not buffered.
  EXPECT_EQ(PipeReader(std::string(1 << 20, 'x')).next(B), St::Truncated);
}

TEST(LspText, Utf16Positions) {
  // é is 2 bytes / 1 unit, 😀 is 4 bytes / 2 units.
  std::string Line = "\xc3\xa9\xf0\x9f\x98\x80x";
  EXPECT_EQ(utf16Length(Line), 4u);
  EXPECT_EQ(byteOffsetOfUtf16(Line, 1), 2u);
  EXPECT_EQ(byteOffsetOfUtf16(Line, 3), 6u);
  EXPECT_EQ(byteOffsetOfUtf16(Line, 99), Line.size());
  EXPECT_EQ(utf16Length("\xff\xfe"), 2u); // malformed bytes count one each
  std::string Text = "ab\r\n" + Line + "\n";
  LineIndex Idx(Text);
  EXPECT_EQ(Idx.line(Text, 0), "ab");
  EXPECT_EQ(Idx.offset(Text, {1, 3}), 4u + 6u);
  Position P = Idx.position(Text, 4 + 6);
  EXPECT_EQ(P.Line, 1);
  EXPECT_EQ(P.Character, 3);
}

TEST(LspText, IncrementalEdits) {
  std::string T = "rank 0: F0 B0;\nrank 1: F0 B0;\n";
  applyEdit(T, {{1, 8}, {1, 13}}, "F0 F1 B0 B1");
  EXPECT_EQ(T, "rank 0: F0 B0;\nrank 1: F0 F1 B0 B1;\n");
  applyEdit(T, {{0, 0}, {0, 0}}, "// x\n");
  EXPECT_EQ(T.substr(0, 5), "// x\n");
  applyEdit(T, {{99, 0}, {0, 0}}, ""); // reversed and out of range: clamped
  EXPECT_EQ(T, "");
}

TEST(LspText, TokensBlocksComments) {
  llvm::StringRef L = "  rank 0: send F3@5 -> 2 recv B(i)@(s+1) <- r F3@5;";
  EXPECT_EQ(L.substr(10, tokenLength(L, 10)), "send F3@5 -> 2");
  EXPECT_EQ(L.substr(25, tokenLength(L, 25)), "recv B(i)@(s+1) <- r");
  EXPECT_EQ(L.substr(46, tokenLength(L, 46)), "F3@5");
  llvm::StringRef T = "fn f() { if x { \"}\" } /* } */ // }\n }tail";
  EXPECT_EQ(T.substr(blockEnd(T, 0)), "tail");
  EXPECT_EQ(commentAbove("// a\n/// b\nfn x() {}\n", 3), "a\nb\n");
  EXPECT_EQ(headerComment("// h1\n//\n// h2\nx"), "h1\n\nh2\n");
  EXPECT_EQ(declarationSignature("schedule  s(a,\n  b = 2) {", 10),
            "schedule s(a, b = 2)");
}

TEST(LspText, Uris) {
  EXPECT_EQ(uriToPath("file:///a%20b/c.pps"), "/a b/c.pps");
  EXPECT_EQ(uriToPath("file://localhost/x.pps"), "/x.pps");
  EXPECT_EQ(uriToPath("untitled:Untitled-1"), "");
  EXPECT_EQ(pathToUri("/a b/c+d.pps"), "file:///a%20b/c%2Bd.pps");
}

std::string stdlibDir() { return std::string(PPS_SOURCE_DIR) + "/stdlib"; }

std::shared_ptr<Analysis> analyse(const std::string &Text) {
  AnalysisOptions O;
  O.StdlibDir = stdlibDir();
  auto A =
      analyze("file:///t/x.pps", "/t/x.pps", Text, 1, O, [] { return false; });
  simulate(*A, [] { return false; });
  return A;
}

TEST(LspAnalysis, StdlibFailureShownAtTheCall) {
  // zb_v asserts a V placement; the error is in stdlib/common.pps.
  auto A = analyse("pipeline p {\n  ranks 2; microbatches 4;\n"
                   "  schedule zb_v();\n}\n");
  ASSERT_EQ(A->Diagnostics.size(), 1u);
  const llvm::json::Object &D = *A->Diagnostics[0].getAsObject();
  EXPECT_EQ(D.getString("code"), llvm::StringRef("assertion-failed"));
  const llvm::json::Object *Start = D.getObject("range")->getObject("start");
  EXPECT_EQ(*Start->getInteger("line"), 2);
  EXPECT_EQ(*Start->getInteger("character"), 11);
  const llvm::json::Array *Rel = D.getArray("relatedInformation");
  ASSERT_TRUE(Rel && !Rel->empty());
  llvm::StringRef Uri =
      *(*Rel)[0].getAsObject()->getObject("location")->getString("uri");
  EXPECT_TRUE(Uri.endswith("/stdlib/common.pps")) << Uri.str();
}

TEST(LspAnalysis, ImportedModuleErrorShownAtTheImport) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("pps-lsp", Dir));
  std::string Lib = std::string(Dir.str()) + "/helpers.pps";
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Lib, EC);
    ASSERT_FALSE(EC);
    OS << "fn f() { return nope; }\n";
  }
  AnalysisOptions O;
  O.StdlibDir = stdlibDir();
  std::string Main = std::string(Dir.str()) + "/main.pps";
  auto A =
      analyze(pathToUri(Main), Main, "import std.common;\nimport helpers;\n", 1,
              O, [] { return false; });
  llvm::sys::fs::remove(Lib);
  llvm::sys::fs::remove(Dir);
  ASSERT_EQ(A->Diagnostics.size(), 1u);
  const llvm::json::Object &D = *A->Diagnostics[0].getAsObject();
  EXPECT_EQ(D.getString("code"), llvm::StringRef("unknown-name"));
  EXPECT_EQ(*D.getObject("range")->getObject("start")->getInteger("line"), 1);
  const llvm::json::Array *Rel = D.getArray("relatedInformation");
  ASSERT_TRUE(Rel && !Rel->empty());
  EXPECT_TRUE((*Rel)[0]
                  .getAsObject()
                  ->getObject("location")
                  ->getString("uri")
                  ->endswith("/helpers.pps"));
}

TEST(LspAnalysis, EveryPipelineAndLibraryFiles) {
  // Two pipelines, one broken: each is checked on its own; a file with no
  // pipeline is not an error.
  auto A = analyse("pipeline a { ranks 2; microbatches 2; schedule gpipe(); }\n"
                   "pipeline b { ranks 2; microbatches 0; schedule gpipe(); "
                   "}\n");
  ASSERT_EQ(A->Pipelines.size(), 2u);
  EXPECT_TRUE(A->Pipelines[0].Checked);
  EXPECT_FALSE(A->Pipelines[1].Schedule.has_value());
  EXPECT_EQ(A->Diagnostics.size(), 1u);
  EXPECT_NE(A->simOf(0), nullptr);
  auto L = analyse("schedule s() { for r in 0..P { rank r { F(0); } } }\n");
  EXPECT_TRUE(L->Diagnostics.empty());
  EXPECT_EQ(L->Decls.size(), 1u);
}

TEST(LspAnalysis, IndexAndHover) {
  std::string Text = "pipeline h {\n  ranks 2; stages 2; microbatches 1;\n"
                     "  rank 0: F0 B0;\n  rank 1: F0 B0;\n}\n";
  auto A = analyse(Text);
  ASSERT_TRUE(A->Diagnostics.empty());
  const Ref *R = A->refAt(4, 14); // rank 1's F0
  ASSERT_NE(R, nullptr);
  EXPECT_EQ(R->Kind, RefKind::Action);
  llvm::json::Value H = hover(*A, {3, 10});
  ASSERT_TRUE(H.getAsObject());
  std::string V =
      H.getAsObject()->getObject("contents")->getString("value")->str();
  EXPECT_NE(V.find("`F0@1` on rank 1, stage 1, microbatch 0: simulated start "
                   "1, end 2"),
            std::string::npos)
      << V;
  EXPECT_EQ(definition(*A, {3, 10}), llvm::json::Value(nullptr));
}

TEST(LspAnalysis, CancelledWorkReturnsNothing) {
  AnalysisOptions O;
  O.StdlibDir = stdlibDir();
  EXPECT_EQ(analyze("u", "/t/y.pps",
                    "pipeline p { ranks 2; microbatches 2; schedule gpipe(); "
                    "}",
                    1, O, [] { return true; }),
            nullptr);
}

TEST(LspFeatures, StdlibCatalog) {
  const auto &C = stdlibCatalog(stdlibDir());
  bool Found = false;
  for (const StdlibSchedule &S : C)
    if (S.Name == "interleaved_1f1b") {
      Found = true;
      EXPECT_EQ(S.Signature.rfind("schedule interleaved_1f1b(", 0), 0u);
      EXPECT_NE(S.Doc.find("Source:"), std::string::npos);
    }
  EXPECT_TRUE(Found);
  EXPECT_GE(C.size(), 12u);
}

/// The server in this process over two pipes.
TEST(LspServer, InProcessSession) {
  std::signal(SIGPIPE, SIG_IGN);
  int In[2], Out[2];
  ASSERT_EQ(::pipe(In), 0);
  ASSERT_EQ(::pipe(Out), 0);
  ServerOptions O;
  O.Analysis.StdlibDir = stdlibDir();
  O.LogFd = -1;
  int Status = -1;
  std::thread T([&] {
    Server S(In[0], Out[1], O);
    Status = S.run();
    ::close(Out[1]);
  });
  MessageWriter W(In[1]);
  MessageReader R(Out[0]);
  auto Next = [&] {
    std::string Body, Err;
    EXPECT_EQ(R.read(Body, Err), St::Message);
    auto V = llvm::json::parse(Body);
    EXPECT_TRUE(bool(V));
    return V ? std::move(*V) : llvm::json::Value(nullptr);
  };
  W.write(llvm::json::Object{{"jsonrpc", "2.0"},
                             {"id", 1},
                             {"method", "initialize"},
                             {"params", llvm::json::Object{}}});
  EXPECT_TRUE(Next().getAsObject()->getObject("result"));
  W.write(llvm::json::Object{
      {"jsonrpc", "2.0"},
      {"method", "textDocument/didOpen"},
      {"params", llvm::json::Object{
                     {"textDocument",
                      llvm::json::Object{{"uri", "file:///t/z.pps"},
                                         {"version", 3},
                                         {"text", "pipeline p { ranks 2; "
                                                  "microbatches 2; schedule "
                                                  "nope(); }"}}}}}});
  llvm::json::Value D = Next();
  const llvm::json::Object *P = D.getAsObject()->getObject("params");
  EXPECT_EQ(*P->getInteger("version"), 3);
  const llvm::json::Object &Diag =
      *P->getArray("diagnostics")->front().getAsObject();
  EXPECT_EQ(Diag.getString("code"), llvm::StringRef("unknown-name"));
  W.write(
      llvm::json::Object{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "no/such"}});
  EXPECT_EQ(*Next().getAsObject()->getObject("error")->getInteger("code"),
            -32601);
  W.write(llvm::json::Object{
      {"jsonrpc", "2.0"}, {"id", 3}, {"method", "shutdown"}});
  Next();
  W.write(llvm::json::Object{{"jsonrpc", "2.0"}, {"method", "exit"}});
  T.join();
  EXPECT_EQ(Status, 0);
  ::close(In[0]);
  ::close(In[1]);
  ::close(Out[0]);
}

} // namespace
