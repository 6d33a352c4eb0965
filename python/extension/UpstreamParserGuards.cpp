//===- UpstreamParserGuards.cpp - inputs that abort upstream's parser -----===//

#include "UpstreamParserGuards.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

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

/// `source` with `//` comments (and, if `strings`, the insides of string
/// literals) blanked out, offsets unchanged: guards look at code only.
std::string blankOut(llvm::StringRef source, bool strings) {
  std::string out = source.str();
  bool inString = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (inString) {
      if (out[i] == '\\' && i + 1 < out.size()) {
        if (strings)
          out[i] = out[i + 1] = ' ';
        ++i;
      } else if (out[i] == '"') {
        inString = false;
      } else if (strings && out[i] != '\n') {
        out[i] = ' ';
      }
    } else if (out[i] == '"') {
      inString = true;
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i)
        out[i] = ' ';
    }
  }
  return out;
}

/// Guard 1. A generic op whose quoted name is a dialect's namespace without
/// an op name (`"pdg"() : () -> ()`, also `"arith"`, `"arith."`, `"builtin"`)
/// aborts with "created with unregistered dialect" (mlir-opt 22.1.8 too).
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
    // "arith" and "arith." alike: a namespace with an empty op name.
    auto [ns, opName] = name.split('.');
    bool looksLikeGenericOp = next < s.size() && s[next] == '(' && !ns.empty() &&
                              opName.empty() && llvm::all_of(name, isIdentChar);
    if (looksLikeGenericOp && (c.ctx->getLoadedDialect(ns) ||
                               llvm::is_contained(c.ctx->getAvailableDialects(), ns))) {
      emitError(c.at(i)) << "'" << name
                         << "' is a dialect, not an operation: a generic op name "
                            "is 'dialect.op', e.g. \"pdg.node\"";
      return false;
    }
    i = end;
  }
  return true;
}

/// Guard 2. The linalg keyword lists `dimensions = [...]` (linalg.reduce,
/// linalg.broadcast) and `permutation = [...]` (linalg.transpose) holding
/// anything but a bracketed list of int64 integers (`[x]`, `@1]`,
/// `[10000000000000000000000]`) trip "attributes may never be null": the
/// linalg parser stores the failed DenseI64ArrayAttr parse unchecked.
bool checkLinalgIntegerLists(const Cursor &c) {
  llvm::StringRef s = c.source;
  for (llvm::StringRef keyword : {"dimensions", "permutation"}) {
    for (size_t pos = s.find(keyword); pos != llvm::StringRef::npos;
         pos = s.find(keyword, pos + 1)) {
      char before = pos ? s[pos - 1] : ' ';
      size_t after = pos + keyword.size();
      if (isIdentChar(before) || llvm::is_contained("%@#!^\"", before) ||
          (after < s.size() && isIdentChar(s[after])))
        continue;
      size_t eq = s.find_first_not_of(" \t\n", after);
      if (eq == llvm::StringRef::npos || s[eq] != '=')
        continue;
      size_t open = s.find_first_not_of(" \t\n", eq + 1);
      // The generic form's `dimensions = array<i64: ...>` parses safely.
      if (open != llvm::StringRef::npos && s.substr(open).starts_with("array<"))
        continue;
      size_t close = open == llvm::StringRef::npos ? open : s.find(']', open);
      if (open == llvm::StringRef::npos || s[open] != '[' || close == llvm::StringRef::npos) {
        emitError(c.at(open == llvm::StringRef::npos ? eq : open))
            << "'" << keyword << " =' must be followed by a list of integers in '[...]'";
        return false;
      }
      llvm::SmallVector<llvm::StringRef> items;
      s.slice(open + 1, close).split(items, ',');
      size_t offset = open + 1;
      for (llvm::StringRef item : items) {
        llvm::StringRef text = item.trim();
        llvm::APInt value;
        bool empty = text.empty() && items.size() == 1;
        if (!empty && (text.consume_front("-"), text.getAsInteger(10, value) ||
                       value.getActiveBits() > 63)) {
          emitError(c.at(offset)) << "'" << keyword << "' must list 64-bit integers, got '"
                                  << item.trim() << "'";
          return false;
        }
        offset += item.size() + 1;
      }
    }
  }
  return true;
}

} // namespace

bool mlir::pdg::checkUpstreamParserGuards(llvm::StringRef source,
                                          llvm::StringRef filename,
                                          MLIRContext *ctx) {
  std::string code = blankOut(source, /*strings=*/false);
  std::string bare = blankOut(source, /*strings=*/true);
  return checkDialectOnlyOpNames(Cursor{code, filename, ctx}) &&
         checkLinalgIntegerLists(Cursor{bare, filename, ctx});
}
