//===- TorchNames.cpp - the action vocabulary of PyTorch's schedule CSV ---===//
#include "pps/import/TorchNames.h"

#include <fmt/format.h>

namespace pps::import {

std::optional<ir::ActionKind> torchKindFromName(llvm::StringRef Name) {
  if (Name.empty())
    return std::nullopt;
  for (unsigned K = 0; K < ir::NumActionKinds; ++K)
    if (ir::actionKindTorchName(ir::ActionKind(K)) == Name)
      return ir::ActionKind(K);
  return std::nullopt;
}

llvm::StringRef torchKindList() {
  static const std::string List = [] {
    std::string Out;
    for (unsigned K = 0; K < ir::NumActionKinds; ++K) {
      llvm::StringRef Name = ir::actionKindTorchName(ir::ActionKind(K));
      if (Name.empty())
        continue;
      if (!Out.empty())
        Out += ", ";
      Out += Name.str();
    }
    return Out;
  }();
  return List;
}

std::string torchActionName(const ir::Action &A) {
  if (A.Kind == ir::ActionKind::Idle)
    return {};
  llvm::StringRef Type = ir::actionKindTorchName(A.Kind);
  if (ir::isControl(A.Kind))
    return fmt::format("{}{}", A.Stage, Type.str());
  return fmt::format("{}{}{}", A.Stage, Type.str(), A.Microbatch);
}

} // namespace pps::import
