//===- Fingerprint.h - everything a compile shows, as one string ----------===//
//
// The differential tests of the front end (EvaluateCodeTest: register code
// against the tree walker; LiteralListTest: the literal-list reader against
// ANTLR) compare two compiles of one text by this fingerprint: the IR with
// every action's location and flags, and the diagnostics (text and JSON).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pps/backends/PpsPrinter.h"
#include "pps/ir/Schedule.h"
#include "pps/support/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace pps::test {

/// The IR of S (or "no schedule") with locations, then the diagnostics in
/// text and JSON. Prints (and so clears) Diags.
inline std::string fingerprint(const std::optional<ir::Schedule> &S,
                               DiagnosticEngine &Diags) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  if (S) {
    backends::printPps(*S, OS);
    OS << "decl " << Diags.formatLoc(S->DeclLoc) << "\n";
    for (size_t R = 0; R < S->Ranks.size(); ++R) {
      OS << "rank " << R << ":";
      for (const ir::Action &A : S->Ranks[R].Actions)
        OS << " " << ir::actionText(A) << "#" << unsigned(A.Flags) << "@"
           << Diags.formatLoc(A.Loc);
      OS << "\n";
    }
  } else {
    OS << "no schedule\n";
  }
  OS << "errors " << Diags.numErrors() << " warnings " << Diags.numWarnings()
     << "\n";
  std::string Json;
  {
    llvm::raw_string_ostream JS(Json);
    // print() clears the engine: take the JSON from a copy of the state.
    DiagnosticEngine Copy = Diags;
    Copy.print(JS, DiagFormat::Json);
  }
  Diags.print(OS);
  OS << Json;
  return Out;
}

} // namespace pps::test
