//===- PdgAttrs.cpp - #pdg.access -----------------------------------------===//

#include "AffineSyntax.h"
#include "PdgDialect.h"
#include "PdgOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pdg;

#define GET_ATTRDEF_CLASSES
#include "PdgAttrs.cpp.inc"

void PdgDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "PdgAttrs.cpp.inc"
      >();
}

llvm::ArrayRef<AffineExpr> AccessAttr::getLowerBounds(size_t entry) const {
  size_t start = 0;
  llvm::ArrayRef<int64_t> layout = getLayout();
  for (size_t i = 0; i < entry; ++i)
    start += layout[2 * i] + layout[2 * i + 1];
  return getExprs().getResults().slice(start, layout[2 * entry]);
}

llvm::ArrayRef<AffineExpr> AccessAttr::getUpperBounds(size_t entry) const {
  size_t start = 0;
  llvm::ArrayRef<int64_t> layout = getLayout();
  for (size_t i = 0; i < entry; ++i)
    start += layout[2 * i] + layout[2 * i + 1];
  start += layout[2 * entry];
  return getExprs().getResults().slice(start, layout[2 * entry + 1]);
}

/// The flattened map and [#lbs, #ubs] layout of per-entry bound lists.
static std::pair<AffineMap, llvm::SmallVector<int64_t>>
flatten(MLIRContext *ctx, unsigned numDims, unsigned numSymbols,
        llvm::ArrayRef<llvm::SmallVector<AffineExpr>> lbs,
        llvm::ArrayRef<llvm::SmallVector<AffineExpr>> ubs) {
  llvm::SmallVector<AffineExpr> flat;
  llvm::SmallVector<int64_t> layout;
  for (auto [lower, upper] : llvm::zip_equal(lbs, ubs)) {
    flat.append(lower.begin(), lower.end());
    flat.append(upper.begin(), upper.end());
    layout.push_back(lower.size());
    layout.push_back(upper.size());
  }
  return {AffineMap::get(numDims, numSymbols, flat, ctx), layout};
}

AccessAttr AccessAttr::fromEntries(
    MLIRContext *ctx, unsigned numDims, unsigned numSymbols,
    llvm::ArrayRef<llvm::SmallVector<AffineExpr>> lbs,
    llvm::ArrayRef<llvm::SmallVector<AffineExpr>> ubs) {
  auto [map, layout] = flatten(ctx, numDims, numSymbols, lbs, ubs);
  return AccessAttr::get(ctx, map, layout);
}

/// Parses the name list `(a, b)` or `[s]` of the standalone form.
static ParseResult parseBinders(AsmParser &parser,
                                AsmParser::Delimiter delimiter,
                                llvm::SmallVectorImpl<std::string> &names) {
  return parser.parseCommaSeparatedList(delimiter, [&]() -> ParseResult {
    llvm::StringRef name;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    if (llvm::is_contained(names, name) || isReservedName(name))
      return parser.emitError(loc) << "'" << name
                                   << "' cannot be bound twice or reserved";
    names.push_back(name.str());
    return success();
  });
}

/// `<(d0, d1)[s0] : [d0, max(0, d1 - 63) : d1 + 1]>`
Attribute AccessAttr::parse(AsmParser &parser, Type) {
  NameScope scope;
  if (parser.parseLess() ||
      parseBinders(parser, AsmParser::Delimiter::Paren, scope.dims))
    return {};
  if (succeeded(parser.parseOptionalLSquare()) &&
      failed(parser.parseOptionalRSquare()) &&
      (parseBinders(parser, AsmParser::Delimiter::None, scope.symbols) ||
       parser.parseRSquare()))
    return {};
  if (parser.parseColon())
    return {};
  for (const std::string &s : scope.symbols)
    if (llvm::is_contained(scope.dims, s)) {
      parser.emitError(parser.getCurrentLocation())
          << "'" << s << "' is bound both as a dim and as a symbol";
      return {};
    }
  llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
  if (parseAccessEntries(parser, scope, lbs, ubs) || parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  auto [map, layout] = flatten(ctx, scope.dims.size(), scope.symbols.size(), lbs, ubs);
  return parser.getChecked<AccessAttr>(ctx, map, layout);
}

void AccessAttr::print(AsmPrinter &printer) const {
  auto dims = positionalNames('d', getNumDims());
  auto syms = positionalNames('s', getNumSymbols());
  printer << "<(" << llvm::join(dims, ", ") << ")";
  if (!syms.empty())
    printer << "[" << llvm::join(syms, ", ") << "]";
  printer << " : ";
  printAccessEntries(printer.getStream(), *this, dims, syms);
  printer << ">";
}

LogicalResult
AccessAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                   AffineMap exprs, llvm::ArrayRef<int64_t> layout) {
  if (!exprs)
    return emitError() << "an access needs an affine map";
  if (layout.size() % 2 != 0)
    return emitError() << "access layout must hold two counts per entry";
  int64_t total = 0;
  for (size_t i = 0; i < layout.size(); i += 2) {
    int64_t nLower = layout[i], nUpper = layout[i + 1];
    if (nLower < 1 || nUpper < 0 || (nUpper == 0 && nLower != 1))
      return emitError() << "access entry #" << i / 2
                         << " must be a point (one expression) or a slice "
                            "(lower and upper bounds)";
    total += nLower + nUpper;
  }
  if (total != exprs.getNumResults())
    return emitError() << "access layout counts " << total
                       << " expressions but the map has "
                       << exprs.getNumResults();
  // Whether the expressions are affine is checked by the ops that use the
  // access, where the user's dim names make the message readable.
  return success();
}

//===----------------------------------------------------------------------===//
// StoreAttr
//===----------------------------------------------------------------------===//

static bool isStoreKind(llvm::StringRef kind) {
  return llvm::is_contained({"point", "window", "block", "full", "growable", "partial",
                             "input"},
                            kind);
}

/// `<window, [B, 64]>`
Attribute StoreAttr::parse(AsmParser &parser, Type) {
  llvm::StringRef kind;
  llvm::SMLoc kindLoc;
  if (parser.parseLess() || parser.getCurrentLocation(&kindLoc) ||
      parser.parseKeyword(&kind))
    return {};
  if (!isStoreKind(kind)) {
    parser.emitError(kindLoc) << "unknown store kind '" << kind
                              << "'; expected point, window, block, full, "
                                 "growable, partial or input";
    return {};
  }
  NameScope scope;
  scope.collectSymbols = true;
  llvm::SmallVector<AffineExpr> extents;
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            AffineExpr e;
            if (parseNamedAffineExpr(parser, scope, e))
              return failure();
            extents.push_back(e);
            return success();
          }) ||
      parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  llvm::SmallVector<StringAttr> names;
  for (const std::string &s : scope.symbols)
    names.push_back(StringAttr::get(ctx, s));
  return parser.getChecked<StoreAttr>(
      ctx, kind, names, AffineMap::get(0, names.size(), extents, ctx));
}

void StoreAttr::print(AsmPrinter &printer) const {
  llvm::SmallVector<std::string> syms;
  for (StringAttr s : getSymbols())
    syms.push_back(s.getValue().str());
  printer << "<" << getKind() << ", [";
  llvm::interleaveComma(getExtents().getResults(), printer, [&](AffineExpr e) {
    printNamedAffineExpr(printer.getStream(), e, {}, syms);
  });
  printer << "]>";
}

LogicalResult
StoreAttr::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                  llvm::StringRef kind, llvm::ArrayRef<StringAttr> symbols,
                  AffineMap extents) {
  if (!isStoreKind(kind))
    return emitError() << "unknown store kind '" << kind << "'";
  if (!extents || extents.getNumDims() != 0 ||
      extents.getNumSymbols() != symbols.size())
    return emitError() << "store extents must be expressions of its symbols";
  for (AffineExpr e : extents.getResults())
    if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() < 1)
      return emitError() << "store extents must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// Discardable attributes set by passes
//===----------------------------------------------------------------------===//

LogicalResult PdgDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  llvm::StringRef name = attr.getName().getValue();
  bool isValueOp = isa<InputOp, NodeOp, UdfOp>(op) || isCollective(op);
  if (name == "pdg.store") {
    auto store = dyn_cast<StoreAttr>(attr.getValue());
    if (!store || !isValueOp)
      return op->emitError("'pdg.store' must be a #pdg.store on a pdg.input, "
                           "pdg.node, pdg.udf or collective");
    auto type = cast<ValueType>(op->getResult(0).getType());
    if (store.getExtents().getNumResults() != type.getRank())
      return op->emitError() << "'pdg.store' has "
                             << store.getExtents().getNumResults()
                             << " extents for a value over "
                             << type.getRank() << " dims";
    return success();
  }
  if (name == "pdg.schedule") {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!dict || !isValueOp)
      return op->emitError("'pdg.schedule' must be a dictionary on a "
                           "pdg.input, pdg.node, pdg.udf or collective");
    auto phase = dict.getAs<StringAttr>("phase");
    if (!phase || !llvm::is_contained({"before", "loop", "after"},
                                      phase.getValue()))
      return op->emitError("'pdg.schedule' needs phase = \"before\", "
                           "\"loop\" or \"after\"");
    auto loops = dict.getAs<ArrayAttr>("loops");
    if (!loops || !dict.getAs<IntegerAttr>("order") ||
        !dict.getAs<IntegerAttr>("stage"))
      return op->emitError("'pdg.schedule' needs loops (array), order and "
                           "stage (integers)");
    auto allOf = [](ArrayAttr array, auto isA) {
      return llvm::all_of(array, [&](Attribute a) { return isA(a); });
    };
    auto isString = [](Attribute a) { return isa<StringAttr>(a); };
    auto isInteger = [](Attribute a) { return isa<IntegerAttr>(a); };
    if (!allOf(loops, isString))
      return op->emitError("'pdg.schedule' loops must be dim names (strings)");
    if (Attribute group = dict.get("group"); group && !isa<IntegerAttr>(group))
      return op->emitError("'pdg.schedule' group must be an integer");
    // The groups inside the enclosing nests, one per level below the top.
    if (Attribute nest = dict.get("nest")) {
      auto levels = dyn_cast<ArrayAttr>(nest);
      if (!levels || !allOf(levels, isInteger))
        return op->emitError("'pdg.schedule' nest must be an array of integers");
    }
    // The loops that step backward (a unit attribute: the innermost).
    if (Attribute reverse = dict.get("reverse")) {
      auto dims = dyn_cast<ArrayAttr>(reverse);
      if (!isa<UnitAttr>(reverse) &&
          (!dims || !allOf(dims, isString) ||
           !llvm::all_of(dims, [&](Attribute d) { return llvm::is_contained(loops, d); })))
        return op->emitError("'pdg.schedule' reverse must name loops of the "
                             "value (an array of strings)");
    }
    return success();
  }
  // Other pdg.* attributes are notes of tools and users: not ours to check.
  return success();
}
