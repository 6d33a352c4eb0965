//===- AffineSyntax.cpp - affine expressions written with names -----------===//

#include "AffineSyntax.h"
#include "PdgDialect.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pdg;

bool mlir::pdg::isReservedName(llvm::StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"max", "min", "floordiv", "ceildiv", "mod"}, true)
      .Cases({"case", "default", "launch", "dynamic", "until"}, true)
      .Default(false);
}

AffineExpr NameScope::lookup(llvm::StringRef name, MLIRContext *ctx) {
  for (auto [i, d] : llvm::enumerate(dims))
    if (d == name)
      return getAffineDimExpr(i, ctx);
  for (auto [i, s] : llvm::enumerate(symbols))
    if (s == name)
      return getAffineSymbolExpr(i, ctx);
  if (!collectSymbols)
    return nullptr;
  symbols.push_back(name.str());
  return getAffineSymbolExpr(symbols.size() - 1, ctx);
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static ParseResult parseFactor(AsmParser &parser, NameScope &scope,
                               AffineExpr &result);

// A divisor that is a constant must be positive: upstream constant folding
// divides by it, so a zero must never reach the AffineExpr builder.
static ParseResult checkConstantDivisor(AsmParser &parser, llvm::SMLoc loc,
                                        AffineExpr rhs, llvm::StringRef op) {
  if (auto c = dyn_cast<AffineConstantExpr>(rhs))
    if (c.getValue() < 1)
      return parser.emitError(loc)
             << "'" << op << "' needs a positive constant divisor, got "
             << c.getValue();
  return success();
}

static ParseResult parseTerm(AsmParser &parser, NameScope &scope,
                             AffineExpr &result) {
  if (parseFactor(parser, scope, result))
    return failure();
  while (true) {
    AffineExpr rhs;
    if (succeeded(parser.parseOptionalStar())) {
      if (parseFactor(parser, scope, rhs))
        return failure();
      result = result * rhs;
      continue;
    }
    llvm::StringRef op;
    if (succeeded(parser.parseOptionalKeyword(&op, {"floordiv", "ceildiv",
                                                     "mod"}))) {
      llvm::SMLoc rhsLoc = parser.getCurrentLocation();
      if (parseFactor(parser, scope, rhs) ||
          checkConstantDivisor(parser, rhsLoc, rhs, op))
        return failure();
      if (op == "floordiv")
        result = result.floorDiv(rhs);
      else if (op == "ceildiv")
        result = result.ceilDiv(rhs);
      else
        result = result % rhs;
      continue;
    }
    return success();
  }
}

ParseResult mlir::pdg::parseNamedAffineExpr(AsmParser &parser,
                                            NameScope &scope,
                                            AffineExpr &result) {
  if (parseTerm(parser, scope, result))
    return failure();
  while (true) {
    AffineExpr rhs;
    if (succeeded(parser.parseOptionalPlus())) {
      if (parseTerm(parser, scope, rhs))
        return failure();
      result = result + rhs;
    } else if (succeeded(parser.parseOptionalMinus())) {
      if (parseTerm(parser, scope, rhs))
        return failure();
      result = result - rhs;
    } else {
      return success();
    }
  }
}

static ParseResult parseFactor(AsmParser &parser, NameScope &scope,
                               AffineExpr &result) {
  MLIRContext *ctx = parser.getContext();
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalMinus())) {
    if (parseFactor(parser, scope, result))
      return failure();
    result = -result;
    return success();
  }
  if (succeeded(parser.parseOptionalLParen())) {
    if (parseNamedAffineExpr(parser, scope, result) || parser.parseRParen())
      return failure();
    return success();
  }
  int64_t value;
  OptionalParseResult intResult = parser.parseOptionalInteger(value);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return failure();
    result = getAffineConstantExpr(value, ctx);
    return success();
  }
  llvm::StringRef name;
  if (failed(parser.parseOptionalKeyword(&name)))
    return parser.emitError(loc, "expected an affine expression: an integer, "
                                 "a dim or symbol name, or '('");
  if (isReservedName(name))
    return parser.emitError(loc) << "'" << name
                                 << "' is reserved and cannot appear here";
  result = scope.lookup(name, ctx);
  if (!result)
    return parser.emitError(loc)
           << "unknown dim or symbol '" << name << "'; known: "
           << llvm::join(scope.dims, ", ")
           << (scope.symbols.empty() ? "" : " / ")
           << llvm::join(scope.symbols, ", ");
  return success();
}

/// Parses `max(e, ...)` / `min(e, ...)` when `keyword` is next, else one expr.
static ParseResult parseBoundList(AsmParser &parser, NameScope &scope,
                                  llvm::StringRef keyword,
                                  llvm::SmallVector<AffineExpr> &bounds) {
  if (failed(parser.parseOptionalKeyword(keyword))) {
    AffineExpr e;
    if (parseNamedAffineExpr(parser, scope, e))
      return failure();
    bounds.push_back(e);
    return success();
  }
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Paren, [&]() -> ParseResult {
        AffineExpr e;
        if (parseNamedAffineExpr(parser, scope, e))
          return failure();
        bounds.push_back(e);
        return success();
      });
}

ParseResult mlir::pdg::parseAccessEntries(
    AsmParser &parser, NameScope &scope,
    llvm::SmallVectorImpl<llvm::SmallVector<AffineExpr>> &lbs,
    llvm::SmallVectorImpl<llvm::SmallVector<AffineExpr>> &ubs) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        llvm::SMLoc loc = parser.getCurrentLocation();
        llvm::SmallVector<AffineExpr> lower, upper;
        if (parseBoundList(parser, scope, "max", lower))
          return failure();
        if (succeeded(parser.parseOptionalColon())) {
          if (parseBoundList(parser, scope, "min", upper))
            return failure();
        } else if (lower.size() != 1) {
          return parser.emitError(loc, "max(...) is only allowed as the lower "
                                       "bound of a slice 'lb : ub'");
        }
        lbs.push_back(std::move(lower));
        ubs.push_back(std::move(upper));
        return success();
      });
}

ParseResult
mlir::pdg::parseConstraintList(AsmParser &parser, NameScope &scope,
                               llvm::SmallVectorImpl<AffineExpr> &constraints,
                               llvm::SmallVectorImpl<bool> &isEq) {
  auto parseOne = [&]() -> ParseResult {
    AffineExpr lhs, rhs;
    if (parseNamedAffineExpr(parser, scope, lhs))
      return failure();
    llvm::SMLoc loc = parser.getCurrentLocation();
    // The lexer has no two-character comparison tokens: read them in parts.
    enum { EQ, GE, GT, LE, LT } kind;
    if (succeeded(parser.parseOptionalEqual())) {
      if (parser.parseEqual())
        return failure();
      kind = EQ;
    } else if (succeeded(parser.parseOptionalGreater())) {
      kind = succeeded(parser.parseOptionalEqual()) ? GE : GT;
    } else if (succeeded(parser.parseOptionalLess())) {
      kind = succeeded(parser.parseOptionalEqual()) ? LE : LT;
    } else {
      return parser.emitError(loc,
                              "expected a comparison: ==, >=, <=, > or <");
    }
    if (parseNamedAffineExpr(parser, scope, rhs))
      return failure();
    switch (kind) {
    case EQ: constraints.push_back(lhs - rhs); isEq.push_back(true); break;
    case GE: constraints.push_back(lhs - rhs); isEq.push_back(false); break;
    case GT: constraints.push_back(lhs - rhs - 1); isEq.push_back(false); break;
    case LE: constraints.push_back(rhs - lhs); isEq.push_back(false); break;
    case LT: constraints.push_back(rhs - lhs - 1); isEq.push_back(false); break;
    }
    return success();
  };
  if (parseOne())
    return failure();
  while (succeeded(parser.parseOptionalComma()))
    if (parseOne())
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {
enum Prec { kSum = 1, kProduct = 2, kAtom = 3 };

struct ExprPrinter {
  llvm::raw_ostream &os;
  llvm::ArrayRef<std::string> dims, symbols;

  static void collectTerms(AffineExpr e, llvm::SmallVectorImpl<AffineExpr> &out) {
    if (e.getKind() == AffineExprKind::Add) {
      auto bin = cast<AffineBinaryOpExpr>(e);
      collectTerms(bin.getLHS(), out);
      collectTerms(bin.getRHS(), out);
      return;
    }
    out.push_back(e);
  }

  /// Splits `x * -c` / `-c` into (x, c) so sums print as subtractions.
  static std::optional<std::pair<AffineExpr, int64_t>> negated(AffineExpr e) {
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      if (c.getValue() < 0 && c.getValue() != INT64_MIN)
        return std::make_pair(AffineExpr(), -c.getValue());
    if (e.getKind() == AffineExprKind::Mul) {
      auto bin = cast<AffineBinaryOpExpr>(e);
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        if (c.getValue() < 0 && c.getValue() != INT64_MIN)
          return std::make_pair(bin.getLHS(), -c.getValue());
    }
    return std::nullopt;
  }

  void printScaled(AffineExpr x, int64_t c) {
    if (!x) {
      os << c;
      return;
    }
    print(x, kProduct);
    if (c != 1)
      os << " * " << c;
  }

  void print(AffineExpr e, int context) {
    switch (e.getKind()) {
    case AffineExprKind::Constant:
      // -2^63 has no positive counterpart to print after a '-'.
      if (cast<AffineConstantExpr>(e).getValue() == INT64_MIN) {
        os << "(-9223372036854775807 - 1)";
        return;
      }
      if (cast<AffineConstantExpr>(e).getValue() < 0 && context > kSum) {
        os << "(" << cast<AffineConstantExpr>(e).getValue() << ")";
        return;
      }
      os << cast<AffineConstantExpr>(e).getValue();
      return;
    case AffineExprKind::DimId: {
      unsigned p = cast<AffineDimExpr>(e).getPosition();
      if (p < dims.size())
        os << dims[p];
      else
        os << "d" << p;
      return;
    }
    case AffineExprKind::SymbolId: {
      unsigned p = cast<AffineSymbolExpr>(e).getPosition();
      if (p < symbols.size())
        os << symbols[p];
      else
        os << "s" << p;
      return;
    }
    case AffineExprKind::Add: {
      if (context > kSum)
        os << "(";
      llvm::SmallVector<AffineExpr> terms;
      collectTerms(e, terms);
      for (auto [i, term] : llvm::enumerate(terms)) {
        if (auto neg = negated(term)) {
          os << (i == 0 ? "-" : " - ");
          printScaled(neg->first, neg->second);
        } else {
          if (i != 0)
            os << " + ";
          print(term, kSum);
        }
      }
      if (context > kSum)
        os << ")";
      return;
    }
    default: {
      auto bin = cast<AffineBinaryOpExpr>(e);
      if (e.getKind() == AffineExprKind::Mul)
        if (auto neg = negated(e)) {
          // A lone negative product, e.g. `-t` or `t * -2`.
          if (context > kSum)
            os << "(";
          os << "-";
          printScaled(neg->first, neg->second);
          if (context > kSum)
            os << ")";
          return;
        }
      const char *op = e.getKind() == AffineExprKind::Mul        ? " * "
                       : e.getKind() == AffineExprKind::FloorDiv ? " floordiv "
                       : e.getKind() == AffineExprKind::CeilDiv  ? " ceildiv "
                                                                 : " mod ";
      // Nested products and quotients are parenthesized for the reader even
      // where precedence would not need it: `(t floordiv 16) * 16`.
      bool paren = context >= kProduct;
      if (paren)
        os << "(";
      print(bin.getLHS(), kProduct);
      os << op;
      print(bin.getRHS(), kAtom);
      if (paren)
        os << ")";
      return;
    }
    }
  }
};
} // namespace

void mlir::pdg::printNamedAffineExpr(llvm::raw_ostream &os, AffineExpr expr,
                                     llvm::ArrayRef<std::string> dims,
                                     llvm::ArrayRef<std::string> symbols) {
  ExprPrinter{os, dims, symbols}.print(expr, kSum);
}

std::string mlir::pdg::formatAffineExpr(AffineExpr expr,
                                        llvm::ArrayRef<std::string> dims,
                                        llvm::ArrayRef<std::string> symbols) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printNamedAffineExpr(os, expr, dims, symbols);
  return s;
}

static void printBoundList(llvm::raw_ostream &os, llvm::StringRef keyword,
                           llvm::ArrayRef<AffineExpr> bounds,
                           llvm::ArrayRef<std::string> dims,
                           llvm::ArrayRef<std::string> symbols) {
  if (bounds.size() == 1) {
    printNamedAffineExpr(os, bounds[0], dims, symbols);
    return;
  }
  os << keyword << "(";
  llvm::interleaveComma(bounds, os, [&](AffineExpr e) {
    printNamedAffineExpr(os, e, dims, symbols);
  });
  os << ")";
}

void mlir::pdg::printAccessEntries(llvm::raw_ostream &os, AccessAttr access,
                                   llvm::ArrayRef<std::string> dims,
                                   llvm::ArrayRef<std::string> symbols) {
  os << "[";
  for (size_t i = 0, e = access.getNumEntries(); i < e; ++i) {
    if (i)
      os << ", ";
    printBoundList(os, "max", access.getLowerBounds(i), dims, symbols);
    if (access.isSlice(i)) {
      os << " : ";
      printBoundList(os, "min", access.getUpperBounds(i), dims, symbols);
    }
  }
  os << "]";
}

std::string mlir::pdg::formatAccess(AccessAttr access,
                                    llvm::ArrayRef<std::string> dims,
                                    llvm::ArrayRef<std::string> symbols) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printAccessEntries(os, access, dims, symbols);
  return s;
}

/// Prints `e >= 0` as `pos >= neg` with positive coefficients on each side.
static void printConstraint(llvm::raw_ostream &os, AffineExpr e, bool isEq,
                            llvm::ArrayRef<std::string> dims,
                            llvm::ArrayRef<std::string> symbols) {
  MLIRContext *ctx = e.getContext();
  llvm::SmallVector<AffineExpr> terms;
  ExprPrinter::collectTerms(e, terms);
  AffineExpr lhs = getAffineConstantExpr(0, ctx), rhs = lhs;
  bool lhsEmpty = true, rhsEmpty = true;
  int64_t constant = 0;
  for (AffineExpr term : terms) {
    if (auto c = dyn_cast<AffineConstantExpr>(term)) {
      constant += c.getValue();
    } else if (auto neg = ExprPrinter::negated(term)) {
      rhs = rhsEmpty ? neg->first * neg->second : rhs + neg->first * neg->second;
      rhsEmpty = false;
    } else {
      lhs = lhsEmpty ? term : lhs + term;
      lhsEmpty = false;
    }
  }
  // lhs - rhs + constant (>=|==) 0  <=>  lhs (>=|==) rhs - constant.
  if (lhsEmpty && !rhsEmpty) {
    // Only negative terms: print `rhs <= constant`.
    printNamedAffineExpr(os, rhs, dims, symbols);
    os << (isEq ? " == " : " <= ") << constant;
    return;
  }
  AffineExpr right = rhsEmpty ? getAffineConstantExpr(-constant, ctx)
                              : rhs - constant;
  printNamedAffineExpr(os, lhs, dims, symbols);
  os << (isEq ? " == " : " >= ");
  printNamedAffineExpr(os, right, dims, symbols);
}

void mlir::pdg::printConstraintList(llvm::raw_ostream &os, IntegerSet set,
                                    llvm::ArrayRef<std::string> dims,
                                    llvm::ArrayRef<std::string> symbols) {
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    if (i)
      os << ", ";
    printConstraint(os, set.getConstraint(i), set.isEq(i), dims, symbols);
  }
}

llvm::SmallVector<std::string> mlir::pdg::positionalNames(char prefix,
                                                          unsigned count) {
  llvm::SmallVector<std::string> names;
  for (unsigned i = 0; i < count; ++i)
    names.push_back(std::string(1, prefix) + std::to_string(i));
  return names;
}

IntegerSet mlir::pdg::getAlwaysTrueSet(unsigned numDims, unsigned numSymbols,
                                       MLIRContext *ctx) {
  return IntegerSet::get(numDims, numSymbols, getAffineConstantExpr(0, ctx),
                         /*eqFlags=*/false);
}

bool mlir::pdg::isAlwaysTrue(IntegerSet set) {
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    auto c = dyn_cast<AffineConstantExpr>(set.getConstraint(i));
    if (!c)
      return false;
    if (set.isEq(i) ? c.getValue() != 0 : c.getValue() < 0)
      return false;
  }
  return true;
}

std::optional<std::pair<unsigned, int64_t>>
mlir::pdg::matchDimPlusConstant(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return std::make_pair(d.getPosition(), int64_t(0));
  if (e.getKind() != AffineExprKind::Add)
    return std::nullopt;
  auto bin = cast<AffineBinaryOpExpr>(e);
  auto d = dyn_cast<AffineDimExpr>(bin.getLHS());
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  if (!d || !c)
    return std::nullopt;
  return std::make_pair(d.getPosition(), c.getValue());
}

std::optional<std::string>
mlir::pdg::findNonAffinePart(AffineExpr e, llvm::ArrayRef<std::string> dims,
                             llvm::ArrayRef<std::string> symbols) {
  std::optional<std::string> found;
  e.walk([&](AffineExpr sub) {
    if (found)
      return;
    auto bin = dyn_cast<AffineBinaryOpExpr>(sub);
    if (!bin)
      return;
    std::string text = formatAffineExpr(sub, dims, symbols);
    switch (sub.getKind()) {
    case AffineExprKind::Mul:
      if (!isa<AffineConstantExpr>(bin.getLHS()) &&
          !isa<AffineConstantExpr>(bin.getRHS()))
        found = "'" + text + "' multiplies two non-constant expressions";
      break;
    case AffineExprKind::FloorDiv:
    case AffineExprKind::CeilDiv:
    case AffineExprKind::Mod: {
      auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (!c)
        found = "'" + text + "' divides by a non-constant expression";
      else if (c.getValue() < 1)
        found = "'" + text + "' divides by a non-positive constant";
      break;
    }
    default:
      break;
    }
  });
  return found;
}
