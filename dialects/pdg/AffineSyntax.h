//===- AffineSyntax.h - affine expressions written with names ---*- C++ -*-===//
//
// pdg prints accesses and case conditions with the user's dimension names
// (`%k[b, max(0, t - 63) : t + 1]`, `case (t >= 1)`) instead of d0/s0. This
// is the one place that parses and prints that syntax.
//
//===----------------------------------------------------------------------===//

#ifndef PDG_AFFINESYNTAX_H
#define PDG_AFFINESYNTAX_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IntegerSet.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::pdg {

class AccessAttr;

/// Binds names to affine dims (fixed) and symbols (fixed, or collected as
/// they first appear when `collectSymbols` is set).
struct NameScope {
  llvm::SmallVector<std::string> dims;
  llvm::SmallVector<std::string> symbols;
  bool collectSymbols = false;

  /// The expression a name stands for; null if unknown and not collecting.
  AffineExpr lookup(llvm::StringRef name, MLIRContext *ctx);
};

/// Words that cannot name a dim or symbol: they are part of the syntax.
bool isReservedName(llvm::StringRef name);

/// [A-Za-z_][A-Za-z0-9_]*: what dims and bound symbols may be called (MLIR's
/// bare identifiers also allow '.' and '$', which analyses cannot take).
bool isPlainIdentifier(llvm::StringRef name);

/// expr := term (('+' | '-') term)* ; term := factor (('*' | 'floordiv' |
/// 'ceildiv' | 'mod') factor)* ; factor := '-' factor | int | name | '(' expr ')'
ParseResult parseNamedAffineExpr(AsmParser &parser, NameScope &scope,
                                 AffineExpr &result);

/// Parses `[e, lb : ub, max(a, b) : min(c, d), ...]`. For each entry, `lbs`
/// gets the point or lower bounds and `ubs` the upper bounds (empty: point).
ParseResult
parseAccessEntries(AsmParser &parser, NameScope &scope,
                   llvm::SmallVectorImpl<llvm::SmallVector<AffineExpr>> &lbs,
                   llvm::SmallVectorImpl<llvm::SmallVector<AffineExpr>> &ubs);

/// Parses `c (, c)*` with c := expr ('==' | '>=' | '<=' | '>' | '<') expr,
/// normalized to `e >= 0` / `e == 0` constraints.
ParseResult parseConstraintList(AsmParser &parser, NameScope &scope,
                                llvm::SmallVectorImpl<AffineExpr> &constraints,
                                llvm::SmallVectorImpl<bool> &isEq);

void printNamedAffineExpr(llvm::raw_ostream &os, AffineExpr expr,
                          llvm::ArrayRef<std::string> dims,
                          llvm::ArrayRef<std::string> symbols);
void printAccessEntries(llvm::raw_ostream &os, AccessAttr access,
                        llvm::ArrayRef<std::string> dims,
                        llvm::ArrayRef<std::string> symbols);
void printConstraintList(llvm::raw_ostream &os, IntegerSet set,
                         llvm::ArrayRef<std::string> dims,
                         llvm::ArrayRef<std::string> symbols);

/// The same, as strings, for diagnostics.
std::string formatAffineExpr(AffineExpr expr, llvm::ArrayRef<std::string> dims,
                             llvm::ArrayRef<std::string> symbols);
std::string formatAccess(AccessAttr access, llvm::ArrayRef<std::string> dims,
                         llvm::ArrayRef<std::string> symbols);

/// Positional names d0.., s0.. used by the standalone attribute syntax.
llvm::SmallVector<std::string> positionalNames(char prefix, unsigned count);

/// A set with no constraint that can fail: the condition of a `default` case.
IntegerSet getAlwaysTrueSet(unsigned numDims, unsigned numSymbols,
                            MLIRContext *ctx);
bool isAlwaysTrue(IntegerSet set);

/// If `e` is `d + c` for dim `d` and constant `c`, returns (d, c).
std::optional<std::pair<unsigned, int64_t>> matchDimPlusConstant(AffineExpr e);

/// Checks that `e` is affine with positive constant divisors; on failure
/// returns a description of the offending subexpression.
std::optional<std::string>
findNonAffinePart(AffineExpr e, llvm::ArrayRef<std::string> dims,
                  llvm::ArrayRef<std::string> symbols);

} // namespace mlir::pdg

#endif // PDG_AFFINESYNTAX_H
