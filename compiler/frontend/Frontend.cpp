//===- Frontend.cpp - the front end's entry points and module loading -----===//
//
// Loads the main file and its imports (std.x from the -I directories and
// the stdlib, dotted or quoted paths relative to the importer, then -I
// directories, then the stdlib), finds the stdlib (stdlibSearchPath), detects
// import cycles, runs Sema over every module, picks the pipeline and hands
// it to the evaluator. The work runs on a thread with a large stack so even
// pathological nesting that passed the parser's limits cannot overflow it.
//
//===----------------------------------------------------------------------===//
#include "pps/frontend/Frontend.h"
#include "pps/frontend/CheckedUnit.h"
#include "pps/support/Suggest.h"

#include "Evaluator.h"
#include "Parser.h"
#include "Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/thread.h"

#include <fmt/format.h>

#include <cstdlib>

namespace pps::frontend {

// The stdlib's place relative to the directory of the running program,
// set by the build from the install layout (bin -> share/pps/stdlib).
#ifndef PPS_STDLIB_RELDIR
#define PPS_STDLIB_RELDIR "../share/pps/stdlib"
#endif

/// The stdlib next to the running program's own file. On Linux that is
/// /proc/self/exe with symlinks resolved, so a link to ppsc from a bin
/// directory on PATH still finds the tree ppsc lives in.
static void appendDefaultStdlib(std::vector<StdlibDir> &Out) {
  static int Anchor;
  std::string Exe = llvm::sys::fs::getMainExecutable(nullptr, &Anchor);
  if (Exe.empty())
    return;
  llvm::SmallString<256> Dir(Exe);
  llvm::sys::path::remove_filename(Dir);
  llvm::sys::path::append(Dir, PPS_STDLIB_RELDIR);
  llvm::sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  Out.push_back({std::string(Dir.str()), fmt::format("next to {}", Exe)});
}

std::vector<StdlibDir> stdlibSearchPath() {
  std::vector<StdlibDir> Out;
  const char *List = std::getenv("PPS_STDLIB_PATH");
  if (List && *List) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(List).split(Parts, ':', /*MaxSplit=*/-1,
                                /*KeepEmpty=*/true);
    bool DefaultAdded = false;
    for (llvm::StringRef P : Parts) {
      if (!P.empty()) {
        Out.push_back({P.str(), "PPS_STDLIB_PATH"});
        continue;
      }
      if (!DefaultAdded)
        appendDefaultStdlib(Out);
      DefaultAdded = true;
    }
    return Out;
  }
  const char *Old = std::getenv("PPS_STDLIB");
  if (Old && *Old) {
    Out.push_back({Old, "PPS_STDLIB"});
    return Out;
  }
  appendDefaultStdlib(Out);
  return Out;
}

std::string defaultStdlibDir() {
  std::vector<StdlibDir> Dirs = stdlibSearchPath();
  for (const StdlibDir &D : Dirs)
    if (llvm::sys::fs::is_directory(D.Path))
      return D.Path;
  return Dirs.empty() ? std::string() : Dirs.front().Path;
}

namespace {

constexpr unsigned MaxImportDepth = 64;

class Loader {
public:
  Loader(SourceManager &SM, DiagnosticEngine &Diags,
         const FrontendOptions &Opts)
      : SM(SM), Diags(Diags), Opts(Opts),
        S(Diags,
          [this](llvm::StringRef Name) { return implicitImport(Name); }) {
    S.StdlibNames = [this] { return stdlibNames(); };
    S.NoteScheduleSearch = [this](Diagnostic &D, LocId Loc,
                                  llvm::StringRef Name) {
      noteScheduleSearch(D, Loc, Name);
    };
  }

  std::optional<ir::Schedule> compile(FileId Main);
  /// Loads Main and its imports and checks every module; null if Main did
  /// not parse.
  ast::Module *loadAndCheck(FileId Main);
  /// Hands over every module loaded (the main one first).
  std::vector<std::unique_ptr<ast::Module>> takeModules() {
    return std::move(Modules);
  }

private:
  ast::Module *load(FileId File, const std::string &Key);
  ast::Module *loadPath(const std::string &Path, LocId From);
  void resolveImports(ast::Module &M);
  ast::Module *implicitImport(llvm::StringRef Name);
  llvm::ArrayRef<std::string> stdlibNames();
  void noteScheduleSearch(Diagnostic &D, LocId Loc, llvm::StringRef Name);
  /// The -I directories, then the stdlib's, without repeats: where `import
  /// std.x;` and implicit schedule names are looked for, and the tail of a
  /// plain import's candidates.
  llvm::ArrayRef<StdlibDir> searchPath();
  /// Whether an import may read Path under --import-root: inside the root,
  /// an -I directory or a stdlib directory. Resolved = false compares the
  /// path as written (made absolute, dots removed) without touching the
  /// file system; true compares the file's real path (links followed).
  bool mayImport(llvm::StringRef Path, bool Resolved);

  SourceManager &SM;
  DiagnosticEngine &Diags;
  const FrontendOptions &Opts;
  Sema S;
  std::vector<std::unique_ptr<ast::Module>> Modules;
  llvm::StringMap<ast::Module *> ByPath;
  std::vector<std::pair<std::string, LocId>> InProgress; // the import chain
  /// Listed on first use: only an unknown schedule name needs it.
  std::optional<std::vector<std::string>> StdlibNameList;
  std::optional<std::vector<StdlibDir>> SearchPath;
  size_t NumImportDirs = 0; ///< leading -I entries of SearchPath
};

llvm::ArrayRef<StdlibDir> Loader::searchPath() {
  if (SearchPath)
    return *SearchPath;
  SearchPath.emplace();
  llvm::StringSet<> Seen;
  auto Add = [&](StdlibDir D) {
    if (!D.Path.empty() && Seen.insert(D.Path).second)
      SearchPath->push_back(std::move(D));
  };
  for (const std::string &D : Opts.ImportPaths)
    Add({D, "-I"});
  NumImportDirs = SearchPath->size();
  if (!Opts.StdlibDir.empty())
    Add({Opts.StdlibDir, "the configured stdlib directory"});
  else
    for (StdlibDir &D : stdlibSearchPath())
      Add(std::move(D));
  return *SearchPath;
}

std::string canonical(llvm::StringRef Path) {
  llvm::SmallString<256> Real;
  if (!llvm::sys::fs::real_path(Path, Real))
    return std::string(Real.str());
  return Path.str();
}

/// Path made absolute with "." and ".." removed, without resolving links.
std::string lexicallyAbsolute(llvm::StringRef Path) {
  llvm::SmallString<256> P(Path);
  llvm::sys::fs::make_absolute(P);
  llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P.str());
}

bool isUnder(llvm::StringRef Path, llvm::StringRef Dir) {
  if (Dir.empty())
    return false;
  llvm::StringRef D = Dir.rtrim('/');
  return Path.startswith(D) &&
         (Path.size() == D.size() || Path[D.size()] == '/');
}

bool Loader::mayImport(llvm::StringRef Path, bool Resolved) {
  if (Opts.ImportRoot.empty())
    return true;
  auto Norm = [&](llvm::StringRef P) {
    return Resolved ? canonical(P) : lexicallyAbsolute(P);
  };
  std::string P = Norm(Path);
  if (isUnder(P, Norm(Opts.ImportRoot)))
    return true;
  for (const StdlibDir &D : searchPath())
    if (isUnder(P, Norm(D.Path)))
      return true;
  return false;
}

ast::Module *Loader::load(FileId File, const std::string &Key) {
  InProgress.push_back({Key, NoLoc});
  std::unique_ptr<ast::Module> M =
      parseModule(File, SM, Diags, Opts.LiteralLists);
  ast::Module *Ptr = nullptr;
  if (M) {
    Ptr = M.get();
    Modules.push_back(std::move(M));
    ByPath[Key] = Ptr;
    resolveImports(*Ptr);
  }
  InProgress.pop_back();
  return Ptr;
}

ast::Module *Loader::loadPath(const std::string &Path, LocId From) {
  std::string Key = canonical(Path);
  for (size_t I = 0; I < InProgress.size(); ++I) {
    if (InProgress[I].first != Key)
      continue;
    std::string Chain;
    for (size_t J = I; J < InProgress.size(); ++J)
      Chain += llvm::sys::path::filename(InProgress[J].first).str() + " -> ";
    Chain += llvm::sys::path::filename(Path).str();
    auto &D = Diags.report(DiagKind::ImportCycle, From,
                           fmt::format("import cycle: {}", Chain));
    for (size_t J = I; J + 1 < InProgress.size(); ++J)
      if (InProgress[J].second != NoLoc)
        D.note(InProgress[J].second, "imported here");
    return nullptr;
  }
  auto It = ByPath.find(Key);
  if (It != ByPath.end())
    return It->second;
  if (InProgress.size() > MaxImportDepth) {
    Diags.report(
        DiagKind::ImportCycle, From,
        fmt::format("imports nested more than {} deep", MaxImportDepth));
    return nullptr;
  }
  FileId File;
  std::string Err;
  if (!SM.addFile(Path, File, Err)) {
    Diags.report(DiagKind::FileError, From,
                 fmt::format("cannot read '{}': {}", Path, Err));
    return nullptr;
  }
  if (!InProgress.empty())
    InProgress.back().second = From;
  ast::Module *M = load(File, Key);
  return M;
}

void Loader::resolveImports(ast::Module &M) {
  llvm::SmallString<256> Dir(M.Path);
  llvm::sys::path::remove_filename(Dir);
  for (ast::ImportDecl &I : M.Imports) {
    std::vector<std::string> Candidates;
    llvm::StringRef P = I.Path;
    if (!I.IsString && P.startswith("std.")) {
      std::string Rel = P.drop_front(4).str();
      std::replace(Rel.begin(), Rel.end(), '.', '/');
      for (const StdlibDir &D : searchPath()) {
        llvm::SmallString<256> F(D.Path);
        llvm::sys::path::append(F, Rel + ".pps");
        Candidates.push_back(std::string(F.str()));
      }
    } else {
      std::string Rel = I.Path;
      if (!I.IsString) {
        std::replace(Rel.begin(), Rel.end(), '.', '/');
        Rel += ".pps";
      }
      if (llvm::sys::path::is_absolute(Rel)) {
        Candidates.push_back(Rel);
      } else {
        llvm::SmallString<256> F(Dir);
        llvm::sys::path::append(F, Rel);
        Candidates.push_back(std::string(F.str()));
        for (const StdlibDir &D : searchPath()) {
          llvm::SmallString<256> G(D.Path);
          llvm::sys::path::append(G, Rel);
          Candidates.push_back(std::string(G.str()));
        }
      }
    }
    std::string Found;
    bool Refused = false;
    for (const std::string &C : Candidates) {
      // Outside the import root: not looked at, not even for existence.
      if (!mayImport(C, /*Resolved=*/false)) {
        Refused = true;
        continue;
      }
      if (!llvm::sys::fs::is_regular_file(C))
        continue;
      if (!mayImport(C, /*Resolved=*/true)) { // a link that leads out
        Refused = true;
        continue;
      }
      Found = C;
      break;
    }
    if (Found.empty() && Refused) {
      Diags.report(DiagKind::ImportOutsideRoot, I.Loc,
                   fmt::format("import '{}' leaves the import root '{}' "
                               "(--import-root); imports may reach only "
                               "files under it, the -I directories and the "
                               "standard library",
                               I.Path, Opts.ImportRoot));
      continue;
    }
    if (Found.empty()) {
      auto &D = Diags.report(DiagKind::ImportNotFound, I.Loc,
                             fmt::format("cannot find module '{}'", I.Path));
      std::string Where;
      for (const std::string &C : Candidates)
        Where += (Where.empty() ? "" : ", ") + C;
      D.note(I.Loc, fmt::format("looked for {}", Where));
      continue;
    }
    I.Resolved = loadPath(Found, I.Loc);
  }
}

ast::Module *Loader::implicitImport(llvm::StringRef Name) {
  // The first NAME.pps on the search path that defines NAME: a file of
  // that name in an -I directory that is something else does not hide the
  // stdlib's schedule.
  for (const StdlibDir &D : searchPath()) {
    llvm::SmallString<256> F(D.Path);
    llvm::sys::path::append(F, Name + ".pps");
    if (!llvm::sys::fs::is_regular_file(F))
      continue;
    ast::Module *M = loadPath(std::string(F.str()), NoLoc);
    if (!M)
      return nullptr;
    // The module and whatever it imports need checking before use.
    for (auto &Mod : Modules)
      S.checkModule(*Mod);
    if (S.lookupFn(*M, Name))
      return M;
  }
  return nullptr;
}

llvm::ArrayRef<std::string> Loader::stdlibNames() {
  if (StdlibNameList)
    return *StdlibNameList;
  StdlibNameList.emplace();
  llvm::StringSet<> Seen;
  for (const StdlibDir &D : searchPath()) {
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator It(D.Path, EC), End;
         It != End && !EC; It.increment(EC)) {
      if (llvm::sys::path::extension(It->path()) != ".pps")
        continue;
      std::string Stem = llvm::sys::path::stem(It->path()).str();
      if (Seen.insert(Stem).second)
        StdlibNameList->push_back(std::move(Stem));
    }
  }
  return *StdlibNameList;
}

void Loader::noteScheduleSearch(Diagnostic &D, LocId Loc,
                                llvm::StringRef Name) {
  llvm::ArrayRef<StdlibDir> Dirs = searchPath();
  std::string Where;
  bool StdlibFound = false;
  for (size_t I = 0; I < Dirs.size(); ++I) {
    bool Exists = llvm::sys::fs::is_directory(Dirs[I].Path);
    if (I >= NumImportDirs)
      StdlibFound |= Exists;
    Where += fmt::format("{}{} ({}{})", Where.empty() ? "" : ", ", Dirs[I].Path,
                         Dirs[I].Origin, Exists ? "" : ", no such directory");
  }
  D.note(Loc, fmt::format("looked for {}.pps in {}", Name,
                          Where.empty() ? "no directory" : Where));
  if (!StdlibFound)
    D.note(Loc, "the standard library was not found: set PPS_STDLIB_PATH "
                "to its directory, or pass -I DIR");
}

ast::Module *Loader::loadAndCheck(FileId Main) {
  std::string Key = SM.fileName(Main).str();
  if (Key != "<stdin>")
    Key = canonical(Key);
  ast::Module *M = load(Main, Key);
  // Check every module loaded (imports first, which sit earlier in the
  // list only partly; the order does not matter: sema is per module).
  for (size_t I = 0; I < Modules.size(); ++I)
    S.checkModule(*Modules[I]);
  return M;
}

/// Evaluates a checked pipeline and rejects overrides it did not consume.
static std::optional<ir::Schedule>
evaluateWithOverrides(ast::PipelineDecl &Pl, DiagnosticEngine &Diags,
                      const FrontendOptions &Opts) {
  std::set<std::string> Used;
  std::optional<ir::Schedule> Out = evaluatePipeline(Pl, Diags, Opts, Used);
  if (!Out)
    return std::nullopt;
  bool BadOverride = false;
  for (auto &[Name, Value] : Opts.Overrides)
    if (!Used.count(Name)) {
      // What -D could have meant: the size fields, the pipeline's lets and
      // the schedule's parameters (or synth's arguments).
      std::vector<std::string> Names = {"ranks", "stages", "microbatches",
                                        "memory_limit"};
      for (const ast::PipelineItem &I : Pl.Items) {
        if (I.Kind == ast::PipelineItemKind::Let)
          Names.push_back(I.Var.Name);
        if (I.Kind != ast::PipelineItemKind::Schedule || !I.Call)
          continue;
        if (I.Call->Target)
          for (const ast::Param &Pm : I.Call->Target->Params)
            Names.push_back(Pm.Var.Name);
        else
          for (const ast::Arg &A : I.Call->Args)
            Names.push_back(A.Name);
      }
      std::string Near = nearestName(Name, Names);
      Diags.report(
          DiagKind::UnknownName, Pl.Loc,
          fmt::format("override '{}' matches no field, let or "
                      "schedule parameter of pipeline '{}'{}",
                      Name, Pl.Name,
                      Near.empty()
                          ? std::string()
                          : fmt::format("; did you mean '{}'?", Near)));
      BadOverride = true;
    }
  if (BadOverride || Diags.hasErrors())
    return std::nullopt;
  return Out;
}

std::optional<ir::Schedule> Loader::compile(FileId Main) {
  ast::Module *M = loadAndCheck(Main);
  if (!M || Diags.hasErrors())
    return std::nullopt;

  ast::PipelineDecl *Pl = nullptr;
  if (!Opts.PipelineName.empty()) {
    for (auto &P : M->Pipelines)
      if (P->Name == Opts.PipelineName)
        Pl = P.get();
    if (!Pl) {
      std::string Names;
      for (auto &P : M->Pipelines)
        Names += (Names.empty() ? "" : ", ") + P->Name;
      Diags.report(DiagKind::NoPipeline, SM.getLoc(Main, 1, 1),
                   fmt::format("no pipeline named '{}' (the file declares: {})",
                               Opts.PipelineName,
                               Names.empty() ? "none" : Names));
      return std::nullopt;
    }
  } else if (M->Pipelines.empty()) {
    auto &D = Diags.report(DiagKind::NoPipeline, SM.getLoc(Main, 1, 1),
                           "the file declares no pipeline");
    // Say what to add, naming a schedule the file declares if there is one.
    std::string Sched = "one_f_one_b";
    for (auto &F : M->Fns)
      if (F->IsSchedule) {
        Sched = F->Name;
        break;
      }
    D.note(SM.getLoc(Main, 1, 1),
           fmt::format("add one to compile it, e.g. `pipeline p {{ ranks 4; "
                       "microbatches 8; schedule {}(); }}`; a file with only "
                       "schedules and fns is a module that others import",
                       Sched));
    return std::nullopt;
  } else if (M->Pipelines.size() > 1) {
    auto &D = Diags.report(
        DiagKind::NoPipeline, M->Pipelines[1]->Loc,
        fmt::format(
            "the file declares {} pipelines; choose one with --pipeline",
            M->Pipelines.size()));
    D.note(M->Pipelines[0]->Loc, "first pipeline declared here");
    return std::nullopt;
  } else {
    Pl = M->Pipelines.front().get();
  }

  return evaluateWithOverrides(*Pl, Diags, Opts);
}

/// Runs Work on a thread with a large stack (or here if no thread can be
/// made: the nesting limits alone keep the stack use small). An exception
/// escaping the front end becomes an error at Where.
void runOnBigStack(llvm::function_ref<void()> Work, DiagnosticEngine &Diags,
                   LocId Where) {
  auto Guarded = [&] {
    try {
      Work();
    } catch (std::exception &E) {
      Diags.report(
          DiagKind::SyntaxError, Where,
          fmt::format("internal error in the front end: {}", E.what()));
    } catch (...) {
      Diags.report(DiagKind::SyntaxError, Where,
                   "internal error in the front end");
    }
  };
#if LLVM_ENABLE_THREADS
  bool Ran = false;
  try {
    llvm::thread T(llvm::Optional<unsigned>(256u << 20), [&] {
      Ran = true;
      Guarded();
    });
    T.join();
  } catch (...) {
  }
  if (!Ran)
    Guarded();
#else
  Guarded();
#endif
}

std::optional<ir::Schedule> compileOnBigStack(FileId Main, SourceManager &SM,
                                              DiagnosticEngine &Diags,
                                              const FrontendOptions &Opts) {
  std::optional<ir::Schedule> Result;
  runOnBigStack(
      [&] {
        Loader L(SM, Diags, Opts);
        Result = L.compile(Main);
      },
      Diags, SM.getLoc(Main, 1, 1));
  return Result;
}

} // namespace

std::optional<ir::Schedule> compileFile(llvm::StringRef Path, SourceManager &SM,
                                        DiagnosticEngine &Diags,
                                        const FrontendOptions &Opts) {
  FileId File;
  std::string Err;
  if (!SM.addFile(Path, File, Err)) {
    Diags.report(DiagKind::FileError, NoLoc,
                 fmt::format("cannot read '{}': {}", Path.str(), Err));
    return std::nullopt;
  }
  return compileOnBigStack(File, SM, Diags, Opts);
}

std::optional<ir::Schedule>
compileBuffer(llvm::StringRef Name, llvm::StringRef Text, SourceManager &SM,
              DiagnosticEngine &Diags, const FrontendOptions &Opts) {
  FileId File = SM.addBuffer(Name.str(), Text.str());
  return compileOnBigStack(File, SM, Diags, Opts);
}

CheckedUnit checkBuffer(llvm::StringRef Name, llvm::StringRef Text,
                        SourceManager &SM, DiagnosticEngine &Diags,
                        const FrontendOptions &Opts) {
  CheckedUnit Unit;
  Unit.MainFile = SM.addBuffer(Name.str(), Text.str());
  runOnBigStack(
      [&] {
        Loader L(SM, Diags, Opts);
        Unit.Main = L.loadAndCheck(Unit.MainFile);
        Unit.Modules = L.takeModules();
      },
      Diags, SM.getLoc(Unit.MainFile, 1, 1));
  return Unit;
}

std::optional<ir::Schedule> evaluateChecked(ast::PipelineDecl &Pl,
                                            DiagnosticEngine &Diags,
                                            const FrontendOptions &Opts) {
  std::optional<ir::Schedule> Result;
  uint64_t ErrorsBefore = Diags.numErrors();
  runOnBigStack([&] { Result = evaluateWithOverrides(Pl, Diags, Opts); }, Diags,
                Pl.Loc);
  if (Diags.numErrors() != ErrorsBefore)
    Result.reset();
  return Result;
}

} // namespace pps::frontend
