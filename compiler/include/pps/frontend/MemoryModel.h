//===- MemoryModel.h - the amounts of a memory block, checked -------------===//
//
// `memory { F = 1; I = -0.5; W = -0.5; }` gives the activation memory model
// (schema::MemoryModel) by the amount each compute adds to the memory of
// its (microbatch, stage): F allocates (> 0), I frees part of it (-F..0),
// W (and whichever backward is last) frees the rest. W and B may be
// written as checks (W = -(F + I), B = -F); W alone gives I. One rule for
// the language's block, `ppsc synth --memory-model` and Python's
// memory_model= arguments. Bytes: the amounts are bytes (a size unit was
// written), bounded by MaxMemoryBytes instead of MaxMemoryAmount.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ppsrt/Schema.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pps::frontend {

/// The amounts as written, by kind.
struct MemoryAmounts {
  std::optional<double> F, I, W, B;
};

/// The model the amounts give. Empty string on success (Out set); else the
/// error (lowercase, no location) and, in Culprit, which amount it is about
/// (0..3: F, I, W, B).
std::string memoryModelOf(const MemoryAmounts &A, schema::MemoryModel &Out,
                          int *Culprit = nullptr, bool Bytes = false);

/// Parses the command line's form "F=2,I=-1,W=-1" (any of F, I, W, B; "B"
/// is not the input-gradient here: the memory model has I and B apart).
/// Empty string on success.
std::string parseMemoryModel(llvm::StringRef Text, schema::MemoryModel &Out);

/// Bytes per unit of a size unit ("" and "B": 1, "KiB": 1024, "GB": 1e9,
/// ...; docs/language.md); none if U is not one.
std::optional<double> bytesPerUnit(llvm::StringRef U);

/// A memory limit as options write it: "8" (the memory model's units) or
/// "2GiB", "2 GiB", "1.5GiB", "2147483648B" (bytes, Bytes set). Empty
/// string on success.
std::string parseMemoryLimit(llvm::StringRef Text, int64_t &Out, bool &Bytes);

/// The model as the block writes it: "F = 1; I = -0.5; W = -0.5".
std::string memoryModelText(const schema::MemoryModel &M);

} // namespace pps::frontend
