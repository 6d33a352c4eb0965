//===- UpstreamParserGuards.cpp - inputs that abort upstream's parser -----===//

#include "UpstreamParserGuards.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>
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

/// Guard 3. MLIR's parser descends recursively into nested regions,
/// brackets and types (and into each unary minus of an affine expression),
/// so deep nesting overflows the stack: a SIGSEGV, not an error. Measured
/// with 8 MiB of stack (pdg-opt, MLIR 22.1.8), the first depth that crashes:
/// `module {` 3800, `!pdg.value<[], ` 5300, `{a = ` 7600, `[` 8300,
/// `(` in an affine map 17000, `tensor<` 19000, `- ` 24000. Aliases nest
/// without brackets (`#a1 = [#a0]`, `#a2 = [#a1]`, ...: the printer
/// overflows at about 15000), so a use of an alias counts the alias's own
/// depth. Real IR nests under 50 deep; kMaxNesting leaves 15x headroom below
/// the lowest crash (and stays under Python's recursion limit, for the
/// analyses that walk the IR recursively).
///
/// Counted, outside strings and comments: `(`, `[`, `{` and `<` with their
/// closers, each run of minus signs at its place, and aliases at their uses.
/// Not counted: a `{` right inside `(` or `<` (the generic form's region
/// list `({` and properties `<{` are one level, as the custom form's `{`);
/// and, because pdg's syntax uses them as comparisons, `<` after a symbol
/// name (`pdg.dim @t < 16`), `<` and `>` in the parentheses after `case`,
/// and `<=`, `>=`, `->` anywhere.
constexpr size_t kMaxNesting = 256;

/// The identifier that ends at `end` (exclusive), skipping whitespace.
llvm::StringRef wordBefore(llvm::StringRef s, size_t end, size_t *start = nullptr) {
  while (end > 0 && llvm::isSpace(s[end - 1]))
    --end;
  size_t begin = end;
  while (begin > 0 && isIdentChar(s[begin - 1]))
    --begin;
  if (start)
    *start = begin;
  return s.slice(begin, end);
}

/// `<` directly after `@name` or `@"name"` (whitespace between allowed).
bool followsSymbolName(llvm::StringRef s, size_t pos) {
  size_t end = pos;
  while (end > 0 && llvm::isSpace(s[end - 1]))
    --end;
  size_t begin = end;
  if (end > 0 && s[end - 1] == '"') { // a quoted name; its inside is blanked
    size_t open = s.rfind('"', end - 1);
    if (open == llvm::StringRef::npos)
      return false;
    begin = open;
  } else {
    wordBefore(s, end, &begin);
    if (begin == end)
      return false;
  }
  return begin > 0 && s[begin - 1] == '@';
}

class NestingScanner {
public:
  explicit NestingScanner(const Cursor &c) : c(c), s(c.source) {}

  /// Emits an error at the first place nested deeper than kMaxNesting.
  bool run() {
    for (i = 0; i < s.size(); ++i) {
      if (!step())
        return false;
    }
    endAlias();
    return true;
  }

private:
  struct Frame {
    char open;
    bool counted;     // false for `{` right inside `(` or `<`
    bool comparisons; // inside `case (...)`: `<` and `>` compare
  };

  const Cursor &c;
  llvm::StringRef s;
  size_t i = 0;
  llvm::SmallVector<Frame> stack;
  size_t depth = 0; // counted frames on the stack
  llvm::StringMap<size_t> aliasDepth;
  std::optional<std::string> alias; // the alias being defined, at the top level
  size_t aliasMax = 0;

  char next(size_t k) const { return k + 1 < s.size() ? s[k + 1] : '\0'; }

  /// False (with the error emitted) if `levels` at `pos` is too deep.
  bool within(size_t pos, size_t levels) {
    aliasMax = std::max(aliasMax, levels);
    if (levels <= kMaxNesting)
      return true;
    emitError(c.at(pos))
        << "nesting deeper than " << kMaxNesting
        << " levels (brackets, regions, types, aliases, unary minus signs): pdg "
           "refuses it, MLIR's recursive parser would overflow its stack; "
           "hint: real IR nests far less, look for a missing closing bracket "
           "or text generated by mistake";
    return false;
  }

  bool push(char open, bool counted, bool comparisons) {
    stack.push_back({open, counted, comparisons});
    depth += counted;
    return within(i, depth);
  }

  void pop() {
    depth -= stack.back().counted;
    stack.pop_back();
  }

  void endAlias() {
    if (alias)
      aliasDepth[*alias] = aliasMax;
    alias.reset();
  }

  /// `#name` or `!name` at `i`: an alias definition (at the top level,
  /// before `=`) or a use of one defined earlier.
  bool sigil() {
    size_t end = i + 1;
    while (end < s.size() && isIdentChar(s[end]))
      ++end;
    llvm::StringRef name = s.slice(i, end);
    if (name.size() == 1)
      return true;
    size_t after = s.find_first_not_of(" \t\r\n", end);
    bool defines = stack.empty() && after != llvm::StringRef::npos && s[after] == '=' &&
                   next(after) != '=';
    if (defines) {
      endAlias();
      alias = name.str();
      aliasMax = 0;
    } else if (auto it = aliasDepth.find(name); it != aliasDepth.end()) {
      if (!within(i, depth + it->second))
        return false;
    }
    i = end - 1;
    return true;
  }

  bool step() {
    char ch = s[i];
    bool comparisons = !stack.empty() && stack.back().comparisons;
    switch (ch) {
    case '\n':
      if (stack.empty())
        endAlias(); // an alias's definition ends with its line
      return true;
    case '#':
    case '!':
      return sigil();
    case '(':
    case '[':
      return push(ch, true, comparisons || (ch == '(' && wordBefore(s, i) == "case"));
    case '{': {
      bool inside = !stack.empty() && (stack.back().open == '(' || stack.back().open == '<');
      return push(ch, !inside, comparisons);
    }
    case '<':
      if (comparisons || next(i) == '=' || followsSymbolName(s, i))
        return true;
      return push(ch, true, false);
    case '>':
      if (comparisons || next(i) == '=' || (i > 0 && s[i - 1] == '-'))
        return true;
      if (!stack.empty() && stack.back().open == '<')
        pop();
      return true;
    case ')':
    case ']':
    case '}': {
      char open = ch == ')' ? '(' : ch == ']' ? '[' : '{';
      // A `<` still open here was not a bracket (or MLIR reports it).
      size_t top = stack.size();
      while (top > 0 && stack[top - 1].open == '<')
        --top;
      if (top > 0 && stack[top - 1].open == open) {
        while (stack.size() >= top)
          pop();
      }
      return true;
    }
    case '-': {
      // `- - - x` nests one level per sign; `->` is an arrow.
      size_t run = 0, j = i;
      while (j < s.size() && s[j] == '-' && next(j) != '>') {
        ++run;
        j = s.find_first_not_of(" \t\r\n", j + 1);
        if (j == llvm::StringRef::npos)
          j = s.size();
      }
      if (!within(i, depth + run))
        return false;
      if (run > 1)
        i = j - 1;
      return true;
    }
    default:
      return true;
    }
  }
};

bool checkNestingDepth(const Cursor &c) { return NestingScanner(c).run(); }

/// Guard 4. A dense array of `index` (`array<index: 0>`, `array<index>`)
/// aborts in Type::getIntOrFloatBitWidth: the dense array parser accepts
/// index as an element type and then asks it for a bit width (other
/// non-numeric types get an error).
bool checkIndexDenseArrays(const Cursor &c) {
  llvm::StringRef s = c.source;
  for (size_t pos = s.find("array"); pos != llvm::StringRef::npos;
       pos = s.find("array", pos + 1)) {
    if (pos && (isIdentChar(s[pos - 1]) || llvm::is_contained("%@#!^", s[pos - 1])))
      continue;
    size_t open = s.find_first_not_of(" \t\r\n", pos + 5);
    if (open == llvm::StringRef::npos || s[open] != '<')
      continue;
    size_t type = s.find_first_not_of(" \t\r\n", open + 1);
    if (type == llvm::StringRef::npos || !s.substr(type).starts_with("index"))
      continue;
    size_t after = type + 5;
    if (after < s.size() && isIdentChar(s[after]))
      continue;
    emitError(c.at(type)) << "a dense array's elements are integers or floats "
                             "('array<i64: ...>'), not 'index'";
    return false;
  }
  return true;
}

} // namespace

bool mlir::pdg::checkUpstreamParserGuards(llvm::StringRef source,
                                          llvm::StringRef filename,
                                          MLIRContext *ctx) {
  std::string code = blankOut(source, /*strings=*/false);
  std::string bare = blankOut(source, /*strings=*/true);
  // Nesting first: the other guards scan the text without recursion, but
  // nothing else should see input that deep.
  return checkNestingDepth(Cursor{bare, filename, ctx}) &&
         checkDialectOnlyOpNames(Cursor{code, filename, ctx}) &&
         checkLinalgIntegerLists(Cursor{bare, filename, ctx}) &&
         checkIndexDenseArrays(Cursor{bare, filename, ctx});
}
