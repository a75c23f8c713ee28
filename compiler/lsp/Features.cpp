//===- Features.cpp - hover, definition, completion, outline --------------===//
#include "pps/lsp/Features.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

namespace pps::lsp {

using namespace frontend;

namespace {

struct BuiltinDoc {
  const char *Name;
  const char *Signature;
  const char *Doc;
  bool IsFunction;
};

const BuiltinDoc Builtins[] = {
    {"P", "P", "the number of ranks (the pipeline's `ranks`)", false},
    {"S", "S", "the number of stages (the pipeline's `stages`)", false},
    {"M", "M", "the number of microbatches (the pipeline's `microbatches`)",
     false},
    {"V", "V", "stages per rank: `S / P`, or 1 if they do not divide", false},
    {"D", "D", "directions: 1, or 2 for a bidirectional pipeline", false},
    {"rank_of", "rank_of(s)", "the rank that holds stage `s`", true},
    {"stage_of", "stage_of(r, c)",
     "the `c`-th stage (ascending) held by rank `r`", true},
    {"min", "min(a, b, ...)", "the least of two or more integers", true},
    {"max", "max(a, b, ...)", "the greatest of two or more integers", true},
    {"div", "div(a, b)", "floor division", true},
    {"mod", "mod(a, b)", "modulo (the sign of `b`)", true},
    {"abs", "abs(a)", "absolute value", true},
    {"array", "array(n, init)", "a new integer array of `n` elements", true},
    {"len", "len(a)", "the length of an array", true},
    {"cost_f", "cost_f(s)",
     "the cost of F on stage `s`, in thousandths of a time unit", true},
    {"cost_i", "cost_i(s)",
     "the cost of I on stage `s`, in thousandths of a time unit", true},
    {"cost_w", "cost_w(s)",
     "the cost of W on stage `s`, in thousandths of a time unit", true},
    {"cost_b", "cost_b(s)",
     "the cost of B on stage `s`, in thousandths of a time unit", true},
    {"comm_time", "comm_time()",
     "the time of one activation message, in thousandths of a time unit", true},
    {"mem_f", "mem_f()",
     "what F allocates in the memory model, in thousandths of its unit", true},
    {"mem_i", "mem_i()",
     "what I frees in the memory model (<= 0), in thousandths of its unit",
     true},
    {"mem_w", "mem_w()",
     "what W frees in the memory model (<= 0), in thousandths of its unit",
     true},
};

const char *const Keywords[] = {
    "import",  "schedule", "fn",     "pipeline",     "let",       "for",
    "in",      "step",     "while",  "break",        "continue",  "if",
    "else",    "rank",     "return", "assert",       "true",      "false",
    "overlap", "send",     "recv",   "unshard",      "reshard",   "reduce_grad",
    "idle",    "ranks",    "stages", "microbatches", "placement", "directions",
    "cost",    "comm",     "memory", "limit",        "fsdp",      "prefetch",
    "loop",    "v"};

const BuiltinDoc *builtinDoc(llvm::StringRef Name) {
  for (const BuiltinDoc &B : Builtins)
    if (Name == B.Name)
      return &B;
  return nullptr;
}

/// Comment text as markdown that keeps its line breaks.
std::string markdownLines(llvm::StringRef Doc) {
  std::string Out;
  llvm::SmallVector<llvm::StringRef, 16> Lines;
  Doc.rtrim().split(Lines, '\n');
  bool Para = true; // at the start of a paragraph
  for (llvm::StringRef L : Lines) {
    if (L.trim().empty()) {
      if (!Para)
        Out += "\n\n";
      Para = true;
      continue;
    }
    if (!Para)
      Out += "  \n";
    Out += L.rtrim().str();
    Para = false;
  }
  return Out;
}

/// The contents of the file holding a location (empty if unknown).
llvm::StringRef fileText(const Analysis &A, LocId Loc) {
  if (!A.SM->isValid(Loc))
    return {};
  return A.SM->contents(A.SM->resolve(Loc).File);
}

/// The byte offset of a location in its file.
size_t offsetOf(const Analysis &A, LocId Loc) {
  llvm::StringRef Text = fileText(A, Loc);
  llvm::StringRef Line = A.SM->lineText(Loc);
  if (Line.data() < Text.data() || Line.data() > Text.data() + Text.size())
    return 0;
  return size_t(Line.data() - Text.data()) + A.SM->resolve(Loc).Col - 1;
}

/// The doc of a fn or schedule: the comment above it, else (a stdlib-style
/// file named after it) the file's header comment.
std::string fnDoc(const Analysis &A, const ast::FnDecl &F) {
  llvm::StringRef Text = fileText(A, F.Loc);
  SourcePos P = A.SM->resolve(F.Loc);
  std::string Doc = commentAbove(Text, P.Line);
  if (Doc.empty() && llvm::sys::path::stem(A.SM->fileName(P.File)) == F.Name)
    Doc = headerComment(Text);
  return Doc;
}

llvm::json::Value markdown(std::string Value) {
  return llvm::json::Object{{"kind", "markdown"},
                            {"value", utf8(std::move(Value))}};
}

llvm::json::Value hoverResult(std::string Value, Range R) {
  return llvm::json::Object{{"contents", markdown(std::move(Value))},
                            {"range", toJSON(R)}};
}

std::string codeBlock(llvm::StringRef Code) {
  return "```pps\n" + Code.str() + "\n```";
}

std::string fmtTime(double T) {
  if (std::isnan(T))
    return "never (the run is stuck)";
  return fmt::format("{:g}", T);
}

const char *kindWord(ir::ActionKind K) {
  switch (K) {
  case ir::ActionKind::F:
    return "forward";
  case ir::ActionKind::I:
    return "backward (input gradient)";
  case ir::ActionKind::W:
    return "backward (weight gradient)";
  case ir::ActionKind::B:
    return "full backward";
  case ir::ActionKind::SendF:
    return "send of an activation";
  case ir::ActionKind::RecvF:
    return "receive of an activation";
  case ir::ActionKind::SendB:
    return "send of a gradient";
  case ir::ActionKind::RecvB:
    return "receive of a gradient";
  case ir::ActionKind::Unshard:
    return "FSDP unshard";
  case ir::ActionKind::Reshard:
    return "FSDP reshard";
  case ir::ActionKind::ReduceGrad:
    return "FSDP gradient reduction";
  case ir::ActionKind::Idle:
    return "explicit idle slot";
  }
  return "action";
}

/// One line about one IR action: what, where, when.
std::string actionLine(const Analysis &A, const ActionSite::At &At) {
  const PipelineResult &R = A.Pipelines[At.Pipeline];
  const ir::Action &Act = R.Schedule->Ranks[At.Rank].Actions[At.Index];
  std::string Line =
      fmt::format("`{}` on rank {}", ir::actionText(Act), At.Rank);
  if (Act.Stage >= 0)
    Line += fmt::format(", stage {}", Act.Stage);
  if (Act.Microbatch >= 0)
    Line += fmt::format(", microbatch {}", Act.Microbatch);
  auto Sim = A.simOf(At.Pipeline);
  if (Sim && At.Rank < Sim->Times.size() &&
      At.Index < Sim->Times[At.Rank].Start.size())
    Line += fmt::format(": simulated start {}, end {}",
                        fmtTime(Sim->Times[At.Rank].Start[At.Index]),
                        fmtTime(Sim->Times[At.Rank].End[At.Index]));
  return Line;
}

std::string actionHover(const Analysis &A, const Ref &R) {
  auto It = A.Actions.find(actionKey(R.Loc, R.ActionClass));
  if (It == A.Actions.end() || It->second.First.empty())
    return "";
  const ActionSite &S = It->second;
  const ActionSite::At &First = S.First.front();
  const PipelineResult &PR = A.Pipelines[First.Pipeline];
  const ir::Action &Act = PR.Schedule->Ranks[First.Rank].Actions[First.Index];
  std::string Out =
      fmt::format("**{}** ({})\n\n", ir::actionText(Act), kindWord(Act.Kind));
  if (S.Count == 1) {
    Out += actionLine(A, First);
  } else {
    Out += fmt::format("emitted {} times; the first {}:\n\n", S.Count,
                       S.First.size());
    for (const ActionSite::At &At : S.First)
      Out += "- " + actionLine(A, At) + "\n";
  }
  if (!A.simOf(First.Pipeline))
    Out += PR.Checked ? "\n\n(not simulated yet)"
                      : "\n\n(not simulated: the pipeline has errors)";
  else
    Out +=
        "\n\n(time units of the cost model, pipeline `" + PR.Decl->Name + "`)";
  return Out;
}

std::string pipelineHover(const Analysis &A, const ast::PipelineDecl &Pl) {
  std::string Out = codeBlock("pipeline " + Pl.Name);
  std::string Doc = commentAbove(A.Text, A.SM->resolve(Pl.Loc).Line);
  if (!Doc.empty())
    Out += "\n\n" + markdownLines(Doc);
  for (size_t I = 0; I < A.Pipelines.size(); ++I) {
    const PipelineResult &R = A.Pipelines[I];
    if (R.Decl != &Pl)
      continue;
    if (!R.Schedule)
      return Out + "\n\nnot evaluated: the pipeline has errors";
    const ir::Schedule &S = *R.Schedule;
    Out += fmt::format("\n\n{} ranks, {} stages ({} placement), {} "
                       "microbatches, {} comm model; {} actions{}",
                       S.Topo.Ranks, S.Topo.Stages,
                       ir::placementName(S.Topo.Place), S.Topo.Microbatches,
                       ir::commModelName(S.Comm), S.numActions(),
                       R.Checked ? " after lowering" : "");
    if (!R.Checked)
      Out += "\n\nthe checks report errors (see the problems list)";
    auto Sim = A.simOf(I);
    if (Sim && !Sim->Deadlocked)
      Out += fmt::format("\n\nsimulated: makespan {:g}, bubble {:.1f}% of "
                         "the makespan, peak memory {} activations per rank",
                         Sim->Makespan, 100 * Sim->BubbleOverMakespan,
                         Sim->PeakMemory);
  }
  return Out;
}

std::string bindingWord(const Analysis &A, const Binding &B) {
  std::string Owner =
      B.Owner < A.Decls.size() ? A.Decls[B.Owner].Name : std::string();
  switch (B.K) {
  case Binding::Param:
    return fmt::format("parameter of `{}`", Owner);
  case Binding::Let:
    return fmt::format("local of `{}`", Owner);
  case Binding::For:
    return fmt::format("loop variable in `{}`", Owner);
  case Binding::PipelineLet:
    return fmt::format("constant of pipeline `{}`", Owner);
  }
  return "local";
}

/// The 1-based line and byte column under an LSP position, trying the
/// character before it too (a cursor just after a name).
const Ref *refUnder(const Analysis &A, Position P) {
  if (size_t(P.Line) >= A.Lines.numLines())
    return nullptr;
  llvm::StringRef Line = A.Lines.line(A.Text, P.Line);
  uint32_t Col = uint32_t(byteOffsetOfUtf16(Line, P.Character)) + 1;
  if (const Ref *R = A.refAt(uint32_t(P.Line) + 1, Col))
    return R;
  if (Col > 1)
    return A.refAt(uint32_t(P.Line) + 1, Col - 1);
  return nullptr;
}

llvm::json::Value locationOf(const Analysis &A, LocId Loc) {
  bool Main = A.SM->resolve(Loc).File == A.Unit.MainFile;
  return llvm::json::Object{{"uri", Main ? A.Uri : pathToUri(A.fileOf(Loc))},
                            {"range", toJSON(A.rangeOf(Loc))}};
}

} // namespace

llvm::json::Value hover(const Analysis &A, Position P) {
  const Ref *R = refUnder(A, P);
  if (!R)
    return nullptr;
  Range Rg = A.rangeOf(*R);
  switch (R->Kind) {
  case RefKind::Builtin: {
    const BuiltinDoc *B = builtinDoc(R->Name);
    if (!B)
      return nullptr;
    return hoverResult(codeBlock(B->Signature) + "\n\nbuilt-in: " + B->Doc, Rg);
  }
  case RefKind::Local: {
    const Binding *B = A.bindingAt(R->Decl);
    if (!B)
      return nullptr;
    llvm::StringRef Line = A.Lines.line(A.Text, int64_t(B->Line) - 1).trim();
    if (Line.endswith("{"))
      Line = Line.drop_back().rtrim();
    std::string Out = codeBlock(Line) + "\n\n" + bindingWord(A, *B);
    std::string Doc = commentAbove(A.Text, B->Line);
    if (!Doc.empty() && B->K != Binding::Param && B->K != Binding::For)
      Out += "\n\n" + markdownLines(Doc);
    return hoverResult(std::move(Out), Rg);
  }
  case RefKind::Function: {
    if (!R->Fn)
      return nullptr;
    llvm::StringRef Text = fileText(A, R->Fn->Loc);
    std::string Out =
        codeBlock(declarationSignature(Text, offsetOf(A, R->Fn->Loc)));
    std::string Doc = fnDoc(A, *R->Fn);
    if (!Doc.empty())
      Out += "\n\n" + markdownLines(Doc);
    if (A.SM->resolve(R->Fn->Loc).File != A.Unit.MainFile)
      Out += fmt::format("\n\ndefined in `{}`", A.fileOf(R->Fn->Loc));
    return hoverResult(std::move(Out), Rg);
  }
  case RefKind::Import: {
    std::string Out = codeBlock("import " + R->Name + ";");
    if (R->Mod) {
      std::string Doc = headerComment(A.SM->contents(R->Mod->File));
      if (!Doc.empty())
        Out += "\n\n" + markdownLines(Doc);
      llvm::SmallString<256> Abs(R->Mod->Path);
      llvm::sys::fs::make_absolute(Abs);
      llvm::sys::path::remove_dots(Abs, true);
      Out += fmt::format("\n\n`{}`", Abs.str().str());
    }
    return hoverResult(std::move(Out), Rg);
  }
  case RefKind::Pipeline:
    return R->Pl ? hoverResult(pipelineHover(A, *R->Pl), Rg) : nullptr;
  case RefKind::Action: {
    std::string Out = actionHover(A, *R);
    if (Out.empty())
      return nullptr;
    return hoverResult(std::move(Out), Rg);
  }
  }
  return nullptr;
}

llvm::json::Value definition(const Analysis &A, Position P) {
  const Ref *R = refUnder(A, P);
  if (!R)
    return nullptr;
  switch (R->Kind) {
  case RefKind::Local:
    return A.SM->isValid(R->Decl) ? locationOf(A, R->Decl) : nullptr;
  case RefKind::Function:
    return R->Fn ? locationOf(A, R->Fn->Loc) : nullptr;
  case RefKind::Pipeline:
    return locationOf(A, R->Loc);
  case RefKind::Import: {
    if (!R->Mod)
      return nullptr;
    llvm::SmallString<256> Abs(R->Mod->Path);
    llvm::sys::fs::make_absolute(Abs);
    llvm::sys::path::remove_dots(Abs, true);
    return llvm::json::Object{{"uri", pathToUri(Abs)},
                              {"range", toJSON(Range{})}};
  }
  case RefKind::Builtin:
  case RefKind::Action:
    return nullptr;
  }
  return nullptr;
}

static std::mutex CatalogMu;
static std::map<std::string, std::vector<StdlibSchedule>> CatalogCache;

const std::vector<StdlibSchedule> *
stdlibCatalogIfReady(const std::string &Dir) {
  std::unique_lock<std::mutex> Lock(CatalogMu, std::try_to_lock);
  if (!Lock)
    return nullptr; // being built
  auto It = CatalogCache.find(Dir);
  return It == CatalogCache.end() ? nullptr : &It->second;
}

const std::vector<StdlibSchedule> &stdlibCatalog(const std::string &Dir) {
  auto &Cache = CatalogCache;
  std::lock_guard<std::mutex> Lock(CatalogMu);
  auto [It, Inserted] = Cache.try_emplace(Dir);
  if (!Inserted)
    return It->second;
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(Dir, EC), E; I != E && !EC;
       I.increment(EC))
    if (llvm::sys::path::extension(I->path()) == ".pps")
      Files.push_back(I->path());
  std::sort(Files.begin(), Files.end());
  for (const std::string &F : Files) {
    auto Buf = llvm::MemoryBuffer::getFile(F, /*IsText=*/true);
    if (!Buf)
      continue;
    llvm::SmallString<256> Abs(F);
    llvm::sys::fs::make_absolute(Abs);
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    FrontendOptions FO;
    FO.StdlibDir = Dir;
    CheckedUnit U = checkBuffer(Abs.str(), (*Buf)->getBuffer(), SM, Diags, FO);
    if (!U.Main)
      continue;
    llvm::StringRef Text = SM.contents(U.MainFile);
    std::string Header = headerComment(Text);
    for (auto &Fn : U.Main->Fns) {
      if (!Fn->IsSchedule)
        continue;
      StdlibSchedule S;
      S.Name = Fn->Name;
      SourcePos P = SM.resolve(Fn->Loc);
      S.Line = P.Line;
      S.Col = P.Col;
      llvm::StringRef LineText = SM.lineText(Fn->Loc);
      size_t Off = size_t(LineText.data() - Text.data()) + P.Col - 1;
      S.Signature = declarationSignature(Text, Off);
      for (const ast::Param &Pm : Fn->Params)
        S.Params.push_back(Pm.Var.Name);
      S.Doc = commentAbove(Text, P.Line);
      if (S.Doc.empty())
        S.Doc = Header;
      S.Path = std::string(Abs.str());
      It->second.push_back(std::move(S));
    }
  }
  return It->second;
}

namespace {

enum CompletionKind {
  CKFunction = 3,
  CKVariable = 6,
  CKModule = 9,
  CKKeyword = 14,
  CKConstant = 21,
};

llvm::json::Object item(llvm::StringRef Label, int Kind, llvm::StringRef Detail,
                        std::string Doc = "") {
  llvm::json::Object O{{"label", Label}, {"kind", Kind}};
  if (!Detail.empty())
    O["detail"] = utf8(Detail.str());
  if (!Doc.empty())
    O["documentation"] = markdown(std::move(Doc));
  return O;
}

/// True if Prefix (the line up to the cursor) ends inside a comment.
bool inComment(llvm::StringRef Prefix) {
  bool InString = false;
  for (size_t I = 0; I < Prefix.size(); ++I) {
    char C = Prefix[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
    } else if (C == '/' && I + 1 < Prefix.size() && Prefix[I + 1] == '/') {
      return true;
    }
  }
  return false;
}

/// The word before the one being typed ("schedule" in "schedule zb_").
llvm::StringRef previousWord(llvm::StringRef Prefix) {
  llvm::StringRef P = Prefix.rtrim(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
  llvm::StringRef Trimmed = P.rtrim();
  if (Trimmed.size() == P.size() && !P.empty())
    return {}; // no space between: not a keyword followed by a name
  size_t Start = Trimmed.size();
  while (Start > 0 &&
         (llvm::isAlnum(Trimmed[Start - 1]) || Trimmed[Start - 1] == '_'))
    --Start;
  return Trimmed.substr(Start);
}

} // namespace

llvm::json::Value completion(const Analysis *A, llvm::StringRef Text,
                             Position P,
                             const std::vector<StdlibSchedule> &Stdlib,
                             bool Snippets) {
  LineIndex Index(Text);
  llvm::StringRef Line = Index.line(Text, P.Line);
  llvm::StringRef Prefix =
      Line.take_front(byteOffsetOfUtf16(Line, P.Character));
  llvm::json::Array Items;
  auto Done = [&] {
    return llvm::json::Object{{"isIncomplete", false},
                              {"items", std::move(Items)}};
  };
  if (inComment(Prefix))
    return Done();
  llvm::StringRef Before = previousWord(Prefix);

  llvm::StringSet<> Seen;
  auto AddSchedule = [&](const StdlibSchedule &S) {
    if (!Seen.insert(S.Name).second)
      return;
    llvm::json::Object O =
        item(S.Name, CKFunction, S.Signature, markdownLines(S.Doc));
    if (Snippets) {
      O["insertText"] = S.Name + "($0)";
      O["insertTextFormat"] = 2;
    }
    Items.push_back(std::move(O));
  };

  if (Before == "import") {
    for (const StdlibSchedule &S : Stdlib) {
      std::string Mod = "std." + llvm::sys::path::stem(S.Path).str();
      if (Seen.insert(Mod).second)
        Items.push_back(item(Mod, CKModule, S.Path));
    }
    return Done();
  }

  // Names the document declares, from the last analysis that parsed.
  std::vector<const Binding *> Locals;
  if (A && A->parsed()) {
    size_t Cursor = A->Lines.offset(A->Text, P);
    const DeclSpan *In = nullptr;
    unsigned InIndex = 0;
    for (unsigned I = 0; I < A->Decls.size(); ++I)
      if (A->Decls[I].Begin <= Cursor && Cursor <= A->Decls[I].End) {
        In = &A->Decls[I];
        InIndex = I;
      }
    Position CursorPos = A->Lines.position(A->Text, Cursor);
    if (In)
      for (const Binding &B : A->Bindings) {
        if (B.Owner != InIndex)
          continue;
        // Visible from its declaration on (block ends are not tracked).
        if (int64_t(B.Line) - 1 < CursorPos.Line)
          Locals.push_back(&B);
      }
    // Fns and schedules of the file and of what it imports.
    auto AddFns = [&](const ast::Module &M, bool Own) {
      for (auto &F : M.Fns) {
        if (Before == "schedule" && !F->IsSchedule)
          continue;
        if (!Seen.insert(F->Name).second)
          continue;
        llvm::StringRef FText = A->SM->contents(M.File);
        std::string Sig = declarationSignature(FText, offsetOf(*A, F->Loc));
        std::string Doc = fnDoc(*A, *F);
        if (!Own)
          Doc += (Doc.empty() ? "" : "\n") + std::string("from ") + M.Path;
        llvm::json::Object O =
            item(F->Name, CKFunction, Sig, markdownLines(Doc));
        if (Snippets) {
          O["insertText"] = F->Name + "($0)";
          O["insertTextFormat"] = 2;
        }
        Items.push_back(std::move(O));
      }
    };
    AddFns(*A->Unit.Main, true);
    for (const ast::ImportDecl &I : A->Unit.Main->Imports)
      if (I.Resolved)
        AddFns(*I.Resolved, false);
  }

  if (Before == "schedule") {
    for (const StdlibSchedule &S : Stdlib)
      AddSchedule(S);
    return Done();
  }

  for (const Binding *B : Locals)
    if (Seen.insert(B->Name).second)
      Items.push_back(item(B->Name, CKVariable, bindingWord(*A, *B)));
  for (const BuiltinDoc &B : Builtins) {
    if (!Seen.insert(B.Name).second)
      continue;
    llvm::json::Object O = item(B.Name, B.IsFunction ? CKFunction : CKConstant,
                                B.Signature, B.Doc);
    if (B.IsFunction && Snippets) {
      O["insertText"] = std::string(B.Name) + "($0)";
      O["insertTextFormat"] = 2;
    }
    Items.push_back(std::move(O));
  }
  for (const char *K : Keywords)
    if (Seen.insert(K).second)
      Items.push_back(item(K, CKKeyword, "keyword"));
  for (const StdlibSchedule &S : Stdlib)
    AddSchedule(S);
  return Done();
}

llvm::json::Value documentSymbols(const Analysis &A) {
  enum SymbolKind { SKModule = 2, SKFunction = 12, SKConstant = 14 };
  llvm::json::Array Out;
  llvm::StringRef Text = A.Text;
  for (unsigned I = 0; I < A.Decls.size(); ++I) {
    const DeclSpan &D = A.Decls[I];
    Range Full{A.Lines.position(Text, D.Begin), A.Lines.position(Text, D.End)};
    Ref NameRef;
    NameRef.Line = D.NameLine;
    NameRef.Col = D.NameCol;
    NameRef.Length = uint32_t(D.Name.size());
    Range Sel = A.rangeOf(NameRef);
    llvm::json::Object Sym{
        {"name", D.Name},
        {"detail", D.K == DeclSpan::Pipeline && !D.ScheduleCall.empty()
                       ? "pipeline, schedule " + D.ScheduleCall
                       : utf8(D.Detail)},
        {"kind", int(D.K == DeclSpan::Pipeline ? SKModule : SKFunction)},
        {"range", toJSON(Full)},
        {"selectionRange", toJSON(Sel)}};
    if (D.K == DeclSpan::Pipeline) {
      llvm::json::Array Children;
      for (const Binding &B : A.Bindings) {
        if (B.Owner != I || B.K != Binding::PipelineLet)
          continue;
        Ref BR;
        BR.Line = B.Line;
        BR.Col = B.Col;
        BR.Length = uint32_t(B.Name.size());
        Range BRange = A.rangeOf(BR);
        Children.push_back(
            llvm::json::Object{{"name", B.Name},
                               {"detail", "let"},
                               {"kind", int(SKConstant)},
                               {"range", toJSON(BRange)},
                               {"selectionRange", toJSON(BRange)}});
      }
      Sym["children"] = std::move(Children);
    }
    Out.push_back(std::move(Sym));
  }
  return Out;
}

} // namespace pps::lsp
