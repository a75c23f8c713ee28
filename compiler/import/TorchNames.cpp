//===- TorchNames.cpp - the action vocabulary of PyTorch's schedule CSV ---===//
#include "pps/import/TorchNames.h"

#include <fmt/format.h>

namespace pps::import {

std::optional<ir::ActionKind> torchKindFromName(llvm::StringRef Name) {
  return schema::kindFromTorchName(std::string_view(Name.data(), Name.size()));
}

llvm::StringRef torchKindList() {
  static const std::string List = schema::torchNameList();
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
