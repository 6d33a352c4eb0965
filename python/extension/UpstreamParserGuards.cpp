//===- UpstreamParserGuards.cpp - inputs that abort upstream's parser -----===//

#include "UpstreamParserGuards.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {

struct Cursor {
  llvm::StringRef source;
  llvm::StringRef filename;
  MLIRContext *ctx;

  Location at(size_t offset) const {
    llvm::StringRef before = source.take_front(offset);
    unsigned line = 1 + before.count('\n');
    size_t lineStart = before.rfind('\n');
    unsigned col = offset - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
    return FileLineColLoc::get(ctx, filename, line, col);
  }
};

bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.'; }

/// Guard 1. A generic op whose quoted name is a dialect's namespace without
/// an op name (`"pdg"() : () -> ()`, also `"arith"`, `"builtin"`) aborts
/// with "created with unregistered dialect" (mlir-opt 22.1.8 too).
bool checkDialectOnlyOpNames(const Cursor &c) {
  llvm::StringRef s = c.source;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '"')
      continue;
    size_t end = s.find('"', i + 1);
    if (end == llvm::StringRef::npos)
      return true;
    llvm::StringRef name = s.slice(i + 1, end);
    size_t next = end + 1;
    while (next < s.size() && (s[next] == ' ' || s[next] == '\t'))
      ++next;
    bool looksLikeGenericOp = next < s.size() && s[next] == '(' && !name.empty() &&
                              !name.contains('.') &&
                              llvm::all_of(name, isIdentChar);
    if (looksLikeGenericOp && (c.ctx->getLoadedDialect(name) ||
                               llvm::is_contained(c.ctx->getAvailableDialects(), name))) {
      emitError(c.at(i)) << "'" << name
                         << "' is a dialect, not an operation: a generic op name "
                            "is 'dialect.op', e.g. \"pdg.node\"";
      return false;
    }
    i = end;
  }
  return true;
}

/// Guard 2. `dimensions = [...]` (linalg.reduce, linalg.broadcast, ...)
/// holding anything but int64 integers (`[x]`, `[10000000000000000000000]`)
/// trips "attributes may never be null": the linalg parser stores the failed
/// DenseI64ArrayAttr parse unchecked.
bool checkDimensionsLists(const Cursor &c) {
  llvm::StringRef s = c.source;
  for (size_t pos = s.find("dimensions"); pos != llvm::StringRef::npos;
       pos = s.find("dimensions", pos + 1)) {
    size_t open = s.find_first_not_of(" \t\n=", pos + strlen("dimensions"));
    if (open == llvm::StringRef::npos || s[open] != '[')
      continue;
    size_t close = s.find(']', open);
    if (close == llvm::StringRef::npos)
      continue;
    llvm::SmallVector<llvm::StringRef> items;
    s.slice(open + 1, close).split(items, ',');
    size_t offset = open + 1;
    for (llvm::StringRef item : items) {
      llvm::StringRef text = item.trim();
      llvm::APInt value;
      bool empty = text.empty() && items.size() == 1;
      if (!empty && (text.consume_front("-"), text.getAsInteger(10, value) ||
                     value.getActiveBits() > 63)) {
        emitError(c.at(offset)) << "'dimensions' must list 64-bit integers, got '"
                                << item.trim() << "'";
        return false;
      }
      offset += item.size() + 1;
    }
  }
  return true;
}

} // namespace

bool mlir::pdg::checkUpstreamParserGuards(llvm::StringRef source,
                                          llvm::StringRef filename,
                                          MLIRContext *ctx) {
  Cursor c{source, filename, ctx};
  return checkDialectOnlyOpNames(c) && checkDimensionsLists(c);
}
