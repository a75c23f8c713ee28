//===- AST.cpp - small helpers of the AST ---------------------------------===//
#include "pps/frontend/AST.h"

#include "llvm/Support/ErrorHandling.h"

namespace pps::frontend::ast {

const char *binOpSpelling(BinOp Op) {
  switch (Op) {
  case BinOp::Add:
    return "+";
  case BinOp::Sub:
    return "-";
  case BinOp::Mul:
    return "*";
  case BinOp::Div:
    return "/";
  case BinOp::Mod:
    return "%";
  case BinOp::Lt:
    return "<";
  case BinOp::Le:
    return "<=";
  case BinOp::Gt:
    return ">";
  case BinOp::Ge:
    return ">=";
  case BinOp::Eq:
    return "==";
  case BinOp::Ne:
    return "!=";
  case BinOp::And:
    return "&&";
  case BinOp::Or:
    return "||";
  }
  llvm_unreachable("every BinOp has a spelling");
}

} // namespace pps::frontend::ast
