//===- Printable.h - text from the input, made safe to print --------------===//
//
// Source lines, CSV cells, names, file paths and messages that quote them
// come from files nobody vetted. Printed raw, an ESC or BEL byte (or a C1
// control, or a bidirectional override) in them can retitle or clear the
// terminal, hide text or draw a fake "ok". Everything the compiler prints
// from its input goes through printable(): control characters become
// visible escapes, the rest is kept as written.
//
//   C0 controls (except tab), DEL, bytes that are not UTF-8   \x1b
//   C1 controls, bidirectional controls, U+2028 and U+2029     <U+009B>
//
// The diagnostics engine applies it to every message, note, file name and
// echoed source line, in text and JSON alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pps {

/// Text with every control character escaped (see the file comment). A tab
/// is kept when KeepTab is true (an echoed source line, where the caret
/// below it lines up with tabs), else escaped as \x09.
std::string printable(llvm::StringRef Text, bool KeepTab = false);

/// True if printable(Text, KeepTab) would return Text unchanged.
bool isPrintable(llvm::StringRef Text, bool KeepTab = false);

/// The indentation that puts a caret under code point Column (1-based) of
/// Line as printable(Line, /*KeepTab=*/true) shows it: a space per printed
/// character, tabs kept so the caret lines up however tabs are expanded.
std::string caretIndent(llvm::StringRef Line, size_t Column);

} // namespace pps
