//===- Transport.h - JSON-RPC over a byte stream, Content-Length framed ---===//
//
// The Language Server Protocol's base protocol: each message is a header
// block ("Content-Length: N", optionally "Content-Type: ...", each line
// ending in \r\n, then an empty line) followed by N bytes of JSON. The
// reader never trusts the peer: header lines and bodies are bounded,
// garbage between messages is skipped up to the next header block, and a
// stream that ends mid-message is reported as such. JSON is parsed by the
// caller with llvm::json.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/JSON.h"

#include <cstddef>
#include <mutex>
#include <string>

namespace pps::lsp {

/// JSON-RPC and LSP error codes.
enum class ErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerNotInitialized = -32002,
  RequestCancelled = -32800,
};

/// Reads framed messages from a file descriptor (blocking).
class MessageReader {
public:
  /// Bodies longer than MaxBody are skipped, not buffered.
  explicit MessageReader(int Fd, size_t MaxBody = size_t(64) << 20)
      : Fd(Fd), MaxBody(MaxBody) {}

  enum class Status {
    Message,   ///< Body holds one message.
    Eof,       ///< The stream ended between messages.
    Truncated, ///< The stream ended inside a header block or a body.
    BadHeader, ///< A header block without a usable Content-Length.
    TooLarge,  ///< A body over MaxBody bytes (skipped).
  };

  /// Reads the next message. On BadHeader/TooLarge, Error says why and the
  /// reader is positioned after the offending block, ready for the next.
  Status read(std::string &Body, std::string &Error);

private:
  /// Makes at least one byte available; false at end of stream.
  bool fill();
  /// Next byte, or -1 at end of stream.
  int get();
  /// Reads one header line without its line ending (bounded; the excess
  /// of an overlong line is dropped). False at end of stream.
  bool readLine(std::string &Line, bool &Overlong);

  int Fd;
  size_t MaxBody;
  char Buf[1 << 16];
  size_t Pos = 0, Len = 0;
  bool AtEof = false;
};

/// Writes framed messages to a file descriptor; safe to call from several
/// threads. After a write error (the client went away) every later write
/// fails fast.
class MessageWriter {
public:
  explicit MessageWriter(int Fd) : Fd(Fd) {}
  /// Sends one message. False if the stream is broken.
  bool write(const llvm::json::Value &Message);
  bool failed() const;

private:
  int Fd;
  mutable std::mutex Mu;
  bool Failed = false;
};

} // namespace pps::lsp
