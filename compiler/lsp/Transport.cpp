//===- Transport.cpp - JSON-RPC over a byte stream, Content-Length framed -===//
#include "pps/lsp/Transport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace pps::lsp {

namespace {
/// Longest header line kept; longer lines are garbage anyway.
constexpr size_t MaxHeaderLine = 1024;
/// Most header lines in one block before it counts as garbage.
constexpr unsigned MaxHeaderLines = 64;
} // namespace

bool MessageReader::fill() {
  if (Pos < Len)
    return true;
  if (AtEof)
    return false;
  for (;;) {
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N > 0) {
      Pos = 0;
      Len = size_t(N);
      return true;
    }
    if (N < 0 && errno == EINTR)
      continue;
    AtEof = true;
    return false;
  }
}

int MessageReader::get() {
  if (!fill())
    return -1;
  return static_cast<unsigned char>(Buf[Pos++]);
}

bool MessageReader::readLine(std::string &Line, bool &Overlong) {
  Line.clear();
  Overlong = false;
  for (;;) {
    int C = get();
    if (C < 0)
      return false;
    if (C == '\n') {
      if (!Line.empty() && Line.back() == '\r')
        Line.pop_back();
      return true;
    }
    if (Line.size() < MaxHeaderLine)
      Line.push_back(char(C));
    else
      Overlong = true;
  }
}

MessageReader::Status MessageReader::read(std::string &Body,
                                          std::string &Error) {
  Body.clear();
  Error.clear();
  std::string Line;
  bool Overlong = false, Any = false, HaveLength = false, BadLength = false;
  uint64_t Length = 0;
  unsigned Lines = 0;
  // The header block: lines up to an empty one.
  for (;;) {
    if (!readLine(Line, Overlong))
      return Any || Overlong || !Line.empty() ? Status::Truncated : Status::Eof;
    if (Line.empty() && !Overlong) {
      if (!Any)
        continue; // blank lines between messages are harmless
      break;
    }
    Any = true;
    if (++Lines > MaxHeaderLines) {
      Error = "header block too long";
      // Resynchronise at the next empty line.
      while (readLine(Line, Overlong))
        if (Line.empty() && !Overlong)
          return Status::BadHeader;
      return Status::Truncated;
    }
    llvm::StringRef L(Line);
    auto [Name, Value] = L.split(':');
    if (Overlong || Name.size() == L.size()) {
      if (Error.empty())
        Error = "a header line that is not 'Name: value'";
      continue;
    }
    if (Name.trim().equals_insensitive("Content-Length")) {
      uint64_t N;
      if (Value.trim().getAsInteger(10, N))
        BadLength = true;
      else {
        HaveLength = true;
        Length = N;
      }
    }
    // Other headers (Content-Type) are accepted and ignored.
  }
  if (BadLength || !HaveLength) {
    Error = BadLength ? "Content-Length is not a number"
                      : (Error.empty() ? "no Content-Length header" : Error);
    return Status::BadHeader;
  }
  if (Length > MaxBody) {
    Error = "message of " + std::to_string(Length) + " bytes is over the " +
            std::to_string(MaxBody) + "-byte limit";
    for (uint64_t Left = Length; Left;) {
      if (!fill())
        return Status::Truncated;
      size_t Take = size_t(std::min<uint64_t>(Len - Pos, Left));
      Pos += Take;
      Left -= Take;
    }
    return Status::TooLarge;
  }
  Body.resize(size_t(Length));
  size_t Got = 0;
  while (Got < Length) {
    if (!fill()) {
      Body.clear();
      return Status::Truncated;
    }
    size_t Take = std::min(Len - Pos, size_t(Length) - Got);
    std::memcpy(&Body[Got], Buf + Pos, Take);
    Pos += Take;
    Got += Take;
  }
  return Status::Message;
}

bool MessageWriter::write(const llvm::json::Value &Message) {
  std::string Json;
  llvm::raw_string_ostream OS(Json);
  OS << Message;
  OS.flush();
  std::string Out =
      "Content-Length: " + std::to_string(Json.size()) + "\r\n\r\n" + Json;
  std::lock_guard<std::mutex> Lock(Mu);
  if (Failed)
    return false;
  const char *P = Out.data();
  size_t Left = Out.size();
  while (Left) {
    ssize_t N = ::write(Fd, P, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Failed = true;
      return false;
    }
    P += N;
    Left -= size_t(N);
  }
  return true;
}

bool MessageWriter::failed() const {
  std::lock_guard<std::mutex> Lock(Mu);
  return Failed;
}

} // namespace pps::lsp
