//===- PdgOps.cpp - pdg op syntax and verifiers ---------------------------===//

#include "PdgOps.h"
#include "AffineSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::pdg;

#define GET_OP_CLASSES
#include "PdgOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

llvm::SmallVector<std::string> mlir::pdg::domainNames(ValueType type) {
  llvm::SmallVector<std::string> names;
  for (StringAttr d : type.getDomain())
    names.push_back(d.getValue().str());
  return names;
}

llvm::SmallVector<std::string> mlir::pdg::symbolNames(ArrayAttr symbols) {
  llvm::SmallVector<std::string> names;
  for (Attribute s : symbols)
    if (auto str = dyn_cast<StringAttr>(s))
      names.push_back(str.getValue().str());
  return names;
}

static std::string joinDomain(ValueType type) {
  return "[" + llvm::join(domainNames(type), ", ") + "]";
}

std::string mlir::pdg::describeValue(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return "a block argument (not a pdg value)";
  if (auto name = def->getAttrOfType<StringAttr>("name"))
    return "'" + name.getValue().str() + "'";
  if (auto udf = dyn_cast<UdfOp>(def))
    return "udf '" + udf.getCallee().str() + "'";
  std::string loc;
  llvm::raw_string_ostream os(loc);
  os << "the " << def->getName() << " at " << def->getLoc();
  return loc;
}

static GraphOp parentGraph(Operation *op) {
  return op->getParentOfType<GraphOp>();
}

RankedTensorType mlir::pdg::accessedType(ValueType producer,
                                         AccessAttr access) {
  llvm::SmallVector<int64_t> shape;
  for (size_t i = 0, e = access.getNumEntries(); i < e; ++i) {
    if (!access.isSlice(i))
      continue;
    auto lbs = access.getLowerBounds(i), ubs = access.getUpperBounds(i);
    int64_t size = ShapedType::kDynamic;
    if (lbs.size() == 1 && ubs.size() == 1) {
      AffineExpr extent = simplifyAffineExpr(
          ubs[0] - lbs[0], access.getNumDims(), access.getNumSymbols());
      // A negative extent is reported by the verifier; it must not reach
      // the tensor type builder, which asserts on it.
      if (auto c = dyn_cast<AffineConstantExpr>(extent); c && c.getValue() >= 0)
        size = c.getValue();
    }
    shape.push_back(size);
  }
  RankedTensorType point = producer.getPointType();
  shape.append(point.getShape().begin(), point.getShape().end());
  return RankedTensorType::get(shape, point.getElementType());
}

LogicalResult mlir::pdg::verifyDomainDeclared(Operation *op, ValueType type,
                                              llvm::StringRef what) {
  GraphOp graph = parentGraph(op);
  if (!graph)
    return success();
  for (StringAttr d : type.getDomain()) {
    if (graph.lookupDim(d.getValue()))
      continue;
    return op->emitOpError()
           << "uses unknown dim '" << d.getValue() << "' in the domain of "
           << what << " " << joinDomain(type)
           << "; declare it in the graph, e.g. `pdg.dim @" << d.getValue()
           << " < 16`";
  }
  return success();
}

LogicalResult mlir::pdg::verifySymbols(Operation *op, ValueType domain,
                                       ArrayAttr symbols) {
  GraphOp graph = parentGraph(op);
  llvm::StringSet<> seen;
  for (Attribute attr : symbols) {
    auto name = dyn_cast<StringAttr>(attr);
    if (!name)
      return op->emitOpError("symbols must be strings");
    if (!seen.insert(name.getValue()).second)
      return op->emitOpError() << "symbol '" << name.getValue()
                               << "' is listed twice";
    if (domain.getDimPosition(name.getValue()) >= 0)
      return op->emitOpError() << "'" << name.getValue()
                               << "' is both a domain dim and a symbol";
    if (!graph)
      continue;
    if (graph.lookupBoundSymbol(name.getValue()))
      continue;
    if (graph.lookupDim(name.getValue()))
      return op->emitOpError()
             << "uses dim '" << name.getValue()
             << "', which is outside the consumer's domain "
             << joinDomain(domain) << "; add '" << name.getValue()
             << "' to the domain, or read a fixed point or a slice of it";
    return op->emitOpError()
           << "uses unknown dim or symbol '" << name.getValue()
           << "'; accesses and conditions may use the node's dims "
           << joinDomain(domain)
           << " and the bound symbols of launch or dynamic dims";
  }
  return success();
}

/// A value over a worker dim has each point on its own rank: an access may
/// read it only at the consumer's own point of that dim (another rank's
/// point is reached through a collective).
static LogicalResult verifyWorkerEntries(Operation *consumer, Value producer,
                                         AccessAttr access, ValueType domain,
                                         llvm::StringRef text) {
  GraphOp graph = parentGraph(consumer);
  if (!graph)
    return success();
  auto producerType = cast<ValueType>(producer.getType());
  for (size_t j = 0, e = access.getNumEntries(); j < e; ++j) {
    llvm::StringRef name = producerType.getDomain()[j].getValue();
    DimOp dim = graph.lookupDim(name);
    if (!dim || !dim.getWorker())
      continue;
    int64_t own = domain.getDimPosition(name);
    bool atOwnPoint = false;
    if (own >= 0 && !access.isSlice(j))
      if (auto d = dyn_cast<AffineDimExpr>(access.getLowerBounds(j)[0]))
        atOwnPoint = d.getPosition() == static_cast<unsigned>(own);
    if (atOwnPoint)
      continue;
    return consumer->emitOpError()
           << "access " << describeValue(producer) << text
           << " reads worker dim '" << name
           << "' at another point than its own: each rank holds only its own "
              "point of a value over '"
           << name << "'; read it at '" << name << "' from a consumer over '"
           << name
           << "', combine the ranks' points with pdg.all_reduce, "
              "pdg.all_gather, pdg.broadcast or pdg.reduce_scatter, or move "
              "them between ranks with pdg.shift";
  }
  return success();
}

LogicalResult mlir::pdg::verifyAccess(Operation *consumer, unsigned index,
                                      Value producer, AccessAttr access,
                                      ValueType domain, ArrayAttr symbols) {
  auto producerType = cast<ValueType>(producer.getType());
  auto dims = domainNames(domain);
  auto syms = symbolNames(symbols);
  std::string text = formatAccess(access, dims, syms);
  if (access.getNumDims() != domain.getRank() ||
      access.getNumSymbols() != symbols.size())
    return consumer->emitOpError()
           << "access #" << index << " is written over "
           << access.getNumDims() << " dims and " << access.getNumSymbols()
           << " symbols, but the node has " << domain.getRank()
           << " dims and " << symbols.size() << " symbols";
  for (AffineExpr e : access.getExprs().getResults())
    if (auto bad = findNonAffinePart(e, dims, syms))
      return consumer->emitOpError()
             << "access " << describeValue(producer) << text
             << " must be affine with positive constant divisors: " << *bad;
  if (access.getNumEntries() != producerType.getRank())
    return consumer->emitOpError()
           << "access " << describeValue(producer) << text << " has "
           << access.getNumEntries() << " entries, but "
           << describeValue(producer) << " is defined over "
           << joinDomain(producerType) << " (" << producerType.getRank()
           << " dims); give one index or slice per dim";
  if (failed(verifyWorkerEntries(consumer, producer, access, domain, text)))
    return failure();
  for (size_t i = 0, e = access.getNumEntries(); i < e; ++i) {
    if (!access.isSlice(i))
      continue;
    auto lbs = access.getLowerBounds(i), ubs = access.getUpperBounds(i);
    // Only a slice whose every bound pair has a constant, empty extent is
    // surely empty; symbolic extents are the analysis passes' concern.
    for (AffineExpr lb : lbs)
      for (AffineExpr ub : ubs) {
        AffineExpr extent = simplifyAffineExpr(ub - lb, access.getNumDims(),
                                               access.getNumSymbols());
        auto c = dyn_cast<AffineConstantExpr>(extent);
        if (c && c.getValue() <= 0)
          return consumer->emitOpError()
                 << "slice '" << formatAffineExpr(lb, dims, syms) << " : "
                 << formatAffineExpr(ub, dims, syms) << "' in access "
                 << describeValue(producer) << text << " is "
                 << (c.getValue() == 0 ? "empty" : "negative")
                 << " (size " << c.getValue()
                 << "); a slice 'lb : ub' reads lb <= i < ub";
      }
  }
  return success();
}

/// The largest constant a condition may hold (as the lowering's guards.LIMIT).
static constexpr int64_t kLargestConstant = int64_t(1) << 62;

/// Checks that a case condition is over the node's dims and symbols.
static LogicalResult verifyCondition(Operation *op, unsigned k, IntegerSet set,
                                     ValueType domain, ArrayAttr symbols) {
  if (set.getNumDims() != domain.getRank() ||
      set.getNumSymbols() != symbols.size())
    return op->emitOpError()
           << "condition of case #" << k << " is written over "
           << set.getNumDims() << " dims and " << set.getNumSymbols()
           << " symbols, but the node has " << domain.getRank()
           << " dims and " << symbols.size() << " symbols";
  auto dims = domainNames(domain);
  auto syms = symbolNames(symbols);
  for (AffineExpr c : set.getConstraints()) {
    if (auto bad = findNonAffinePart(c, dims, syms))
      return op->emitOpError()
             << "condition of case #" << k
             << " must be affine with positive constant divisors: " << *bad;
    // MLIR folds the constants of a constraint into one (`d0 - 1 >= 2^63 -
    // 1` becomes `d0 - 2^63 >= 0`, wrapped), which it then prints in a
    // form it cannot parse back; the lowering's index arithmetic would
    // overflow on such constants too. Past 2^62 is refused.
    std::optional<int64_t> huge;
    c.walk([&](AffineExpr e) {
      if (auto constant = dyn_cast<AffineConstantExpr>(e))
        if (constant.getValue() > kLargestConstant || constant.getValue() < -kLargestConstant)
          huge = constant.getValue();
    });
    if (huge)
      return op->emitOpError()
             << "condition of case #" << k << " holds the constant " << *huge
             << ", beyond +-2^62 (a wrapped or overflowing bound?); bounds of dims "
                "are far below it";
  }
  return success();
}

/// True if the constraints of `set` imply `dim >= bound`.
static bool impliesLowerBound(IntegerSet set, unsigned dim, int64_t bound) {
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    AffineExpr c = simplifyAffineExpr(set.getConstraint(i), set.getNumDims(),
                                      set.getNumSymbols());
    auto m = matchDimPlusConstant(c);
    // `d + c >= 0` (or `== 0`) gives d >= -c.
    if (m && m->first == dim && m->second != INT64_MIN && -m->second >= bound)
      return true;
  }
  return false;
}

/// True if `set` holds at every point where `dim == value`: each constraint
/// mentions no dim or symbol but `dim`, and holds there.
static bool holdsWhereDimIs(IntegerSet set, unsigned dim, int64_t value) {
  MLIRContext *ctx = set.getContext();
  llvm::SmallVector<AffineExpr> dims, syms;
  for (unsigned i = 0; i < set.getNumDims(); ++i)
    dims.push_back(i == dim ? getAffineConstantExpr(value, ctx)
                            : getAffineDimExpr(i, ctx));
  for (unsigned i = 0; i < set.getNumSymbols(); ++i)
    syms.push_back(getAffineSymbolExpr(i, ctx));
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    AffineExpr c = simplifyAffineExpr(
        set.getConstraint(i).replaceDimsAndSymbols(dims, syms),
        set.getNumDims(), set.getNumSymbols());
    auto k = dyn_cast<AffineConstantExpr>(c);
    if (!k || (set.isEq(i) ? k.getValue() != 0 : k.getValue() < 0))
      return false;
  }
  return true;
}

/// A point read `d - c` (c > 0) is below the producer's domain at d < c:
/// the case must exclude those points, by its own condition or because
/// earlier cases (which take precedence) define every d < c. For a
/// self-read, a miss is exactly a recurrence without a base case.
static LogicalResult verifyLowerEdges(Operation *op, Value result, unsigned k,
                                      llvm::ArrayRef<IntegerSet> conditions,
                                      Value producer, AccessAttr access,
                                      ValueType domain, ArrayAttr symbols) {
  auto dims = domainNames(domain);
  auto syms = symbolNames(symbols);
  bool isUdf = isa<UdfOp>(op);
  for (size_t i = 0, e = access.getNumEntries(); i < e; ++i) {
    if (access.isSlice(i))
      continue;
    AffineExpr point = simplifyAffineExpr(access.getLowerBounds(i)[0],
                                          access.getNumDims(),
                                          access.getNumSymbols());
    auto m = matchDimPlusConstant(point);
    if (!m || m->second >= 0)
      continue;
    std::string dim = dims[m->first];
    std::string read = describeValue(producer) +
                       formatAccess(access, dims, syms);
    if (m->second == INT64_MIN)
      return op->emitOpError() << "reads " << read
                               << " at an offset beyond the 64-bit range";
    int64_t need = -m->second;
    if (!isUdf && impliesLowerBound(conditions[k], m->first, need))
      continue;
    // Earlier cases win at the points they define: d < need may be theirs.
    bool coveredEarlier = !isUdf && need <= 64;
    for (int64_t v = 0; coveredEarlier && v < need; ++v)
      coveredEarlier = llvm::any_of(conditions.take_front(k), [&](IntegerSet s) {
        return holdsWhereDimIs(s, m->first, v);
      });
    if (coveredEarlier)
      continue;
    if (isUdf)
      return op->emitOpError()
             << "reads " << read << ", which is outside the domain of "
             << describeValue(producer) << " when " << dim << " < " << need
             << "; a udf cannot guard its reads: read a node defined by "
                "cases instead";
    if (producer == result)
      return op->emitOpError()
             << "recurrence without a base case: case #" << k << " reads "
             << read << ", which is outside the domain when " << dim << " < "
             << need << "; guard this case with (" << dim << " >= " << need
             << ") and define " << dim << " < " << need
             << " in another case, e.g. case (" << dim << " == 0)";
    return op->emitOpError()
           << "case #" << k << " reads " << read
           << ", which is outside the domain of " << describeValue(producer)
           << " when " << dim << " < " << need << "; guard this case with ("
           << dim << " >= " << need << ")";
  }
  return success();
}

/// True if no point satisfies the set because a constant constraint fails.
static bool isSurelyFalse(IntegerSet set) {
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i) {
    auto k = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(
        set.getConstraint(i), set.getNumDims(), set.getNumSymbols()));
    if (k && (set.isEq(i) ? k.getValue() != 0 : k.getValue() < 0))
      return true;
  }
  return false;
}

/// `(%a = %x[b, t - 1] : !pdg.value<...>, ...)`. Block arguments get the
/// accessed tensor type; accesses are kept as raw expressions until the
/// node's symbols are all known.
struct ParsedInput {
  OpAsmParser::Argument arg;
  OpAsmParser::UnresolvedOperand operand;
  Type producerType;
  llvm::SmallVector<llvm::SmallVector<AffineExpr>> lbs, ubs;
  llvm::SMLoc loc;
};

static ParseResult parseInputs(OpAsmParser &parser, NameScope &scope,
                               bool withArguments,
                               llvm::SmallVectorImpl<ParsedInput> &inputs) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::OptionalParen, [&]() -> ParseResult {
        ParsedInput in;
        in.loc = parser.getCurrentLocation();
        if (withArguments &&
            (parser.parseArgument(in.arg) || parser.parseEqual()))
          return failure();
        if (parser.parseOperand(in.operand) ||
            parseAccessEntries(parser, scope, in.lbs, in.ubs) ||
            parser.parseColon() || parser.parseType(in.producerType))
          return failure();
        if (!isa<ValueType>(in.producerType))
          return parser.emitError(in.loc)
                 << "an input must be a !pdg.value, got " << in.producerType;
        inputs.push_back(std::move(in));
        return success();
      });
}

/// Sorts collected symbols by name and rewrites expressions to match, so
/// that the symbol order does not depend on where a name first appeared.
static llvm::SmallVector<AffineExpr>
sortSymbols(NameScope &scope, MLIRContext *ctx) {
  llvm::SmallVector<unsigned> order(scope.symbols.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return scope.symbols[a] < scope.symbols[b];
  });
  llvm::SmallVector<AffineExpr> replacement(scope.symbols.size());
  llvm::SmallVector<std::string> sorted;
  for (auto [newPos, oldPos] : llvm::enumerate(order)) {
    replacement[oldPos] = getAffineSymbolExpr(newPos, ctx);
    sorted.push_back(scope.symbols[oldPos]);
  }
  scope.symbols = sorted;
  return replacement;
}

static AccessAttr buildAccess(MLIRContext *ctx, const ParsedInput &in,
                              const NameScope &scope,
                              llvm::ArrayRef<AffineExpr> symbolRemap) {
  llvm::SmallVector<AffineExpr> dimsId;
  for (unsigned i = 0; i < scope.dims.size(); ++i)
    dimsId.push_back(getAffineDimExpr(i, ctx));
  auto remap = [&](llvm::ArrayRef<llvm::SmallVector<AffineExpr>> lists) {
    llvm::SmallVector<llvm::SmallVector<AffineExpr>> out;
    for (const auto &list : lists) {
      out.emplace_back();
      for (AffineExpr e : list)
        out.back().push_back(e.replaceDimsAndSymbols(dimsId, symbolRemap));
    }
    return out;
  };
  return AccessAttr::fromEntries(ctx, scope.dims.size(), scope.symbols.size(),
                                 remap(in.lbs), remap(in.ubs));
}

static ParseResult parseDomain(OpAsmParser &parser, NameScope &scope) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        llvm::StringRef name;
        llvm::SMLoc loc = parser.getCurrentLocation();
        if (parser.parseKeyword(&name))
          return failure();
        if (isReservedName(name))
          return parser.emitError(loc) << "'" << name
                                       << "' is reserved and cannot name a dim";
        if (!isPlainIdentifier(name))
          return parser.emitError(loc)
                 << "dim name '" << name
                 << "' must be an identifier (letters, digits, '_')";
        if (llvm::is_contained(scope.dims, name))
          return parser.emitError(loc) << "dim '" << name
                                       << "' appears twice in the domain";
        scope.dims.push_back(name.str());
        return success();
      });
}

/// Resolves parsed inputs to operands, builds their accesses and gives block
/// arguments their accessed types.
static ParseResult finishInputs(OpAsmParser &parser, OperationState &state,
                                llvm::MutableArrayRef<ParsedInput> inputs,
                                const NameScope &scope,
                                llvm::ArrayRef<AffineExpr> symbolRemap,
                                llvm::SmallVectorImpl<Attribute> &accesses) {
  MLIRContext *ctx = parser.getContext();
  for (ParsedInput &in : inputs) {
    if (parser.resolveOperand(in.operand, in.producerType, state.operands))
      return failure();
    AccessAttr access = buildAccess(ctx, in, scope, symbolRemap);
    auto producer = cast<ValueType>(in.producerType);
    accesses.push_back(access);
    in.arg.type = accessedType(producer, access);
  }
  return success();
}

/// `-> tensor<...>`: a value op's type at one point.
static ParseResult parsePointType(OpAsmParser &parser, llvm::StringRef what,
                                  RankedTensorType &point) {
  Type type;
  llvm::SMLoc loc;
  if (parser.parseArrow() || parser.getCurrentLocation(&loc) || parser.parseType(type))
    return failure();
  point = dyn_cast<RankedTensorType>(type);
  if (!point)
    return parser.emitError(loc) << "a " << what
                                 << "'s value at one point must be a ranked tensor, got "
                                 << type;
  return success();
}

/// The attributes and result type every value op gets once parsed: its
/// accesses, its (sorted) symbols and `!pdg.value<[domain], point>`.
static void addValueOpParts(OperationState &state, StringAttr accessesName,
                            StringAttr symbolsName, const NameScope &scope,
                            llvm::ArrayRef<Attribute> accesses, RankedTensorType point) {
  MLIRContext *ctx = point.getContext();
  llvm::SmallVector<Attribute> symbolAttrs;
  for (const std::string &s : scope.symbols)
    symbolAttrs.push_back(StringAttr::get(ctx, s));
  state.addAttribute(accessesName, ArrayAttr::get(ctx, accesses));
  state.addAttribute(symbolsName, ArrayAttr::get(ctx, symbolAttrs));
  llvm::SmallVector<StringAttr> domain;
  for (const std::string &d : scope.dims)
    domain.push_back(StringAttr::get(ctx, d));
  state.addTypes(ValueType::get(ctx, domain, point));
}

static void printInputs(OpAsmPrinter &p, Operation *op, ValueRange operands,
                        ArrayAttr accesses, unsigned accessStart,
                        Block *block, ValueType domain, ArrayAttr symbols) {
  if (operands.empty())
    return;
  auto dims = domainNames(domain);
  auto syms = symbolNames(symbols);
  p << " (";
  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (i)
      p << ", ";
    if (block) {
      p.printOperand(block->getArgument(i));
      p << " = ";
    }
    p.printOperand(operand);
    auto access = dyn_cast<AccessAttr>(accesses[accessStart + i]);
    if (access)
      printAccessEntries(p.getStream(), access, dims, syms);
    else
      p << "[<bad access>]";
    p << " : " << operand.getType();
  }
  p << ")";
}

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

void GraphOp::build(OpBuilder &builder, OperationState &state,
                    llvm::StringRef name) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  Region *body = state.addRegion();
  body->emplaceBlock();
}

DimOp GraphOp::lookupDim(llvm::StringRef name) {
  if (getBody().empty())
    return {};
  for (auto dim : getBodyBlock().getOps<DimOp>()) {
    // Ops verify in order: a later dim may not have been checked yet and
    // lack its (required) name or kind; callers read both.
    StringAttr dimName = dim.getSymNameAttr();
    if (dimName && dim.getKindAttr() && dimName.getValue() == name)
      return dim;
  }
  return {};
}

DimOp GraphOp::lookupBoundSymbol(llvm::StringRef symbol) {
  if (getBody().empty())
    return {};
  for (auto dim : getBodyBlock().getOps<DimOp>())
    if (dim.getBound() && *dim.getBound() == symbol)
      return dim;
  return {};
}

//===----------------------------------------------------------------------===//
// DimOp
//===----------------------------------------------------------------------===//

/// `@t < 16`, `@b < launch B (max 64)?`,
/// `@t < dynamic T (max 512)? until %eos : !pdg.value<...>`
ParseResult DimOp::parse(OpAsmParser &parser, OperationState &state) {
  MLIRContext *ctx = parser.getContext();
  StringAttr symName;
  if (parser.parseSymbolName(symName, getSymNameAttrName(state.name),
                             state.attributes) ||
      parser.parseLess())
    return failure();
  BoundKind kind;
  int64_t size;
  OptionalParseResult sizeResult = parser.parseOptionalInteger(size);
  if (sizeResult.has_value()) {
    if (failed(*sizeResult))
      return failure();
    kind = BoundKind::Static;
    state.addAttribute(getSizeAttrName(state.name),
                       IntegerAttr::get(IntegerType::get(ctx, 64), size));
  } else {
    llvm::StringRef word;
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&word))
      return failure();
    if (word == "launch") {
      kind = BoundKind::Launch;
    } else if (word == "world") { // a launch dim bound to the world size
      kind = BoundKind::Launch;
      state.addAttribute(getWorkerAttrName(state.name), UnitAttr::get(ctx));
    } else if (word == "dynamic") {
      kind = BoundKind::Dynamic;
    } else {
      return parser.emitError(loc)
             << "expected a static bound (an integer), 'launch', 'world' or "
                "'dynamic', got '"
             << word << "'";
    }
    llvm::StringRef bound;
    llvm::SMLoc boundLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&bound))
      return failure();
    if (isReservedName(bound) || bound == "max")
      return parser.emitError(boundLoc)
             << "expected the name of the bound symbol, e.g. `launch B`";
    state.addAttribute(getBoundAttrName(state.name),
                       StringAttr::get(ctx, bound));
    if (succeeded(parser.parseOptionalKeyword("max"))) {
      if (parser.parseInteger(size))
        return failure();
      state.addAttribute(getSizeAttrName(state.name),
                         IntegerAttr::get(IntegerType::get(ctx, 64), size));
    }
    if (succeeded(parser.parseOptionalKeyword("until"))) {
      OpAsmParser::UnresolvedOperand until;
      Type untilType;
      if (parser.parseOperand(until) || parser.parseColonType(untilType) ||
          parser.resolveOperand(until, untilType, state.operands))
        return failure();
    }
  }
  state.addAttribute(getKindAttrName(state.name), BoundKindAttr::get(ctx, kind));
  return parser.parseOptionalAttrDict(state.attributes);
}

void DimOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " < ";
  switch (getKind()) {
  case BoundKind::Static:
    p << (getSizeAttr() ? getSizeAttr().getInt() : 0);
    break;
  case BoundKind::Launch:
  case BoundKind::Dynamic:
    p << (getWorker() && getKind() == BoundKind::Launch
              ? llvm::StringRef("world")
              : stringifyBoundKind(getKind()))
      << " " << (getBound() ? *getBound() : llvm::StringRef("?"));
    if (getSizeAttr())
      p << " max " << getSizeAttr().getInt();
    if (getUntil())
      p << " until " << getUntil() << " : " << getUntil().getType();
    break;
  }
  llvm::SmallVector<llvm::StringRef> elided = {
      getSymNameAttrName(), getKindAttrName(), getSizeAttrName(),
      getBoundAttrName()};
  if (getKind() == BoundKind::Launch)
    elided.push_back(getWorkerAttrName());
  p.printOptionalAttrDict((*this)->getAttrs(), elided);
}

LogicalResult DimOp::verify() {
  if (!isPlainIdentifier(getSymName()))
    return emitOpError() << "dim name '" << getSymName()
                         << "' must be an identifier (letters, digits, '_')";
  // The generated accessor reads the attribute as unsigned: read it signed.
  std::optional<int64_t> size;
  if (getSizeAttr())
    size = getSizeAttr().getInt();
  if (size && *size < 1)
    return emitOpError() << "bound of dim '" << getSymName()
                         << "' must be at least 1, got " << *size;
  if (getWorker() && getKind() != BoundKind::Launch)
    return emitOpError() << "worker dim '" << getSymName()
                         << "' is bound by the number of ranks, given at "
                            "launch: declare it `pdg.dim @"
                         << getSymName() << " < world W`";
  switch (getKind()) {
  case BoundKind::Static:
    if (!size)
      return emitOpError() << "static dim '" << getSymName()
                           << "' needs a size, e.g. `pdg.dim @"
                           << getSymName() << " < 16`";
    if (getBound() || getUntil())
      return emitOpError("a static dim has no bound symbol or 'until'");
    return success();
  case BoundKind::Launch:
  case BoundKind::Dynamic:
    break;
  }
  if (!getBound() || !isPlainIdentifier(*getBound()) || isReservedName(*getBound()))
    return emitOpError() << "dim '" << getSymName()
                         << "' needs a bound symbol name that is an identifier "
                            "(letters, digits, '_'), e.g. `launch B`";
  if (getKind() == BoundKind::Launch) {
    if (getUntil())
      return emitOpError() << "launch dim '" << getSymName()
                           << "' is given when the program starts; only a "
                              "dynamic dim has 'until'";
    return success();
  }
  if (!getUntil())
    return emitOpError() << "dynamic dim '" << getSymName()
                         << "' needs a condition that ends it, e.g. `until "
                            "%eos : !pdg.value<[" << getSymName()
                         << "], tensor<i1>>`";
  auto untilType = cast<ValueType>(getUntil().getType());
  if (untilType.getDimPosition(getSymName()) < 0)
    return emitOpError() << "the 'until' condition of dim '" << getSymName()
                         << "' must be defined over it, but its domain is ["
                         << llvm::join(domainNames(untilType), ", ") << "]";
  RankedTensorType point = untilType.getPointType();
  if (point.getRank() != 0 || !point.getElementType().isInteger(1))
    return emitOpError() << "the 'until' condition of dim '" << getSymName()
                         << "' must be a tensor<i1> per point, got " << point;
  return success();
}

//===----------------------------------------------------------------------===//
// InputOp / OutputOp
//===----------------------------------------------------------------------===//

/// Names SSA values after the program's own names where they are valid
/// identifiers, so printed IR reads like the source program.
static void setNameFromAttr(Value result, StringAttr name,
                            OpAsmSetValueNameFn setNameFn) {
  if (name && !name.getValue().empty())
    setNameFn(result, name.getValue());
}

void InputOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFromAttr(getResult(), getNameAttr(), setNameFn);
}

LogicalResult InputOp::verify() {
  if (getName().empty())
    return emitOpError("a program input needs a non-empty name");
  return verifyDomainDeclared(*this, cast<ValueType>(getResult().getType()),
                              "input '" + getName().str() + "'");
}

LogicalResult OutputOp::verify() {
  if (getName().empty())
    return emitOpError("a program output needs a non-empty name");
  return verifyDomainDeclared(*this, cast<ValueType>(getValue().getType()),
                              "output '" + getName().str() + "'");
}

//===----------------------------------------------------------------------===//
// NodeOp
//===----------------------------------------------------------------------===//

void NodeOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFromAttr(getResult(), getNameAttr(), setNameFn);
}

unsigned NodeOp::getCaseInputStart(unsigned k) {
  unsigned start = 0;
  for (unsigned i = 0; i < k; ++i)
    start += getCases()[i].empty() ? 0 : getCases()[i].getNumArguments();
  return start;
}

/// pdg.node ("name")? [dims] (inputs)? -> type (attributes {...})?
///   ( region | (case (constraints) (inputs)? region | default (inputs)? region)+ )
ParseResult NodeOp::parse(OpAsmParser &parser, OperationState &state) {
  MLIRContext *ctx = parser.getContext();
  std::string name;
  if (succeeded(parser.parseOptionalString(&name)))
    state.addAttribute(getNameAttrName(state.name), StringAttr::get(ctx, name));
  NameScope scope;
  scope.collectSymbols = true;
  if (parseDomain(parser, scope))
    return failure();

  struct ParsedCase {
    llvm::SmallVector<AffineExpr> constraints;
    llvm::SmallVector<bool> isEq;
    llvm::SmallVector<ParsedInput, 2> inputs;
    llvm::SMLoc loc;
  };
  llvm::SmallVector<ParsedCase, 2> cases;
  // Inputs before the arrow: the short form, one unconditional case.
  cases.emplace_back();
  cases.back().loc = parser.getCurrentLocation();
  if (parseInputs(parser, scope, /*withArguments=*/true, cases.back().inputs))
    return failure();
  RankedTensorType point;
  if (parsePointType(parser, "node", point) ||
      parser.parseOptionalAttrDictWithKeyword(state.attributes))
    return failure();

  // The regions are parsed last: their block arguments need the accessed
  // types, which need every symbol of the node to be known. So parse case
  // headers and bodies in one pass, keeping bodies aside.
  llvm::SmallVector<std::unique_ptr<Region>> regions;
  auto parseBody = [&](ParsedCase &c) -> ParseResult {
    // Symbols may still be collected in later cases; types of block args
    // depend only on slice extents, which do not change when symbols are
    // renumbered, so compute them now with the symbols seen so far.
    llvm::SmallVector<AffineExpr> identity;
    for (unsigned i = 0; i < scope.symbols.size(); ++i)
      identity.push_back(getAffineSymbolExpr(i, ctx));
    llvm::SmallVector<OpAsmParser::Argument> args;
    for (ParsedInput &in : c.inputs) {
      AccessAttr access = buildAccess(ctx, in, scope, identity);
      auto producer = cast<ValueType>(in.producerType);
      in.arg.type = accessedType(producer, access);
      args.push_back(in.arg);
    }
    auto region = std::make_unique<Region>();
    // The node is isolated from above: its body gets a name scope of its own,
    // so a forward reference outside can never resolve to a value inside.
    if (parser.parseRegion(*region, args, /*enableNameShadowing=*/true))
      return failure();
    regions.push_back(std::move(region));
    return success();
  };

  bool hasCases = false;
  while (true) {
    ParsedCase c;
    c.loc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword("case"))) {
      if (parser.parseLParen() ||
          parseConstraintList(parser, scope, c.constraints, c.isEq) ||
          parser.parseRParen())
        return failure();
    } else if (failed(parser.parseOptionalKeyword("default"))) {
      break;
    }
    if (!hasCases) {
      if (!cases.back().inputs.empty())
        return parser.emitError(c.loc)
               << "a node with cases takes its inputs per case, not before "
                  "'->'";
      cases.clear();
      hasCases = true;
    }
    if (parseInputs(parser, scope, /*withArguments=*/true, c.inputs))
      return failure();
    cases.push_back(std::move(c));
    if (parseBody(cases.back()))
      return failure();
  }
  // Without cases, the single body follows: `{...}`.
  if (!hasCases && parseBody(cases.back()))
    return failure();

  llvm::SmallVector<AffineExpr> remap = sortSymbols(scope, ctx);
  llvm::SmallVector<AffineExpr> dimsId;
  for (unsigned i = 0; i < scope.dims.size(); ++i)
    dimsId.push_back(getAffineDimExpr(i, ctx));
  llvm::SmallVector<Attribute> accesses, conditions;
  for (ParsedCase &c : cases) {
    if (finishInputs(parser, state, c.inputs, scope, remap, accesses))
      return failure();
    IntegerSet set;
    if (c.constraints.empty()) {
      set = getAlwaysTrueSet(scope.dims.size(), scope.symbols.size(), ctx);
    } else {
      llvm::SmallVector<AffineExpr> constraints;
      for (AffineExpr e : c.constraints)
        constraints.push_back(e.replaceDimsAndSymbols(dimsId, remap));
      set = IntegerSet::get(scope.dims.size(), scope.symbols.size(),
                            constraints, c.isEq);
    }
    conditions.push_back(IntegerSetAttr::get(set));
  }
  // The block argument types were computed before symbols were sorted;
  // slice extents are symbol-order independent, so they stay valid.
  state.addAttribute(getConditionsAttrName(state.name),
                     ArrayAttr::get(ctx, conditions));
  addValueOpParts(state, getAccessesAttrName(state.name),
                  getSymbolsAttrName(state.name), scope, accesses, point);
  for (auto &region : regions)
    state.addRegion(std::move(region));
  return success();
}

void NodeOp::print(OpAsmPrinter &p) {
  if (getName())
    p << " \"" << *getName() << "\"";
  ValueType type = getValueType();
  p << " " << "[" << llvm::join(domainNames(type), ", ") << "]";
  llvm::SmallVector<llvm::StringRef> elided = {
      getAccessesAttrName(), getConditionsAttrName(), getSymbolsAttrName(),
      getNameAttrName()};
  bool shortForm = getCases().size() == 1 && getConditions().size() == 1 &&
                   isAlwaysTrue(getCondition(0));
  if (shortForm) {
    Region &body = getCases()[0];
    printInputs(p, *this, getInputs(), getAccesses(), 0,
                body.empty() ? nullptr : &body.front(), type, getSymbols());
    p << " -> " << type.getPointType();
    p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), elided);
    p << " ";
    p.printRegion(body, /*printEntryBlockArgs=*/false);
    return;
  }
  p << " -> " << type.getPointType();
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), elided);
  auto dims = domainNames(type);
  auto syms = symbolNames(getSymbols());
  p.increaseIndent();
  for (auto [k, region] : llvm::enumerate(getCases())) {
    p.printNewline();
    IntegerSet set = getCondition(k);
    if (isAlwaysTrue(set)) {
      p << "default";
    } else {
      p << "case (";
      printConstraintList(p.getStream(), set, dims, syms);
      p << ")";
    }
    unsigned start = getCaseInputStart(k);
    unsigned count = region.empty() ? 0 : region.getNumArguments();
    printInputs(p, *this, getInputs().slice(start, count), getAccesses(),
                start, region.empty() ? nullptr : &region.front(), type,
                getSymbols());
    p << " ";
    p.printRegion(region, /*printEntryBlockArgs=*/false);
  }
  p.decreaseIndent();
}

LogicalResult NodeOp::verify() {
  ValueType type = getValueType();
  if (failed(verifyDomainDeclared(*this, type, "node " +
                                                   describeValue(getResult()))))
    return failure();
  if (getCases().empty())
    return emitOpError("needs at least one case");
  if (getConditions().size() != getCases().size())
    return emitOpError() << "has " << getCases().size() << " cases but "
                         << getConditions().size() << " conditions";
  unsigned numArgs = 0;
  for (Region &r : getCases()) {
    if (r.empty())
      return emitOpError("every case needs a body block");
    numArgs += r.getNumArguments();
  }
  if (numArgs != getInputs().size())
    return emitOpError() << "case bodies take " << numArgs
                         << " arguments in all, but the node has "
                         << getInputs().size() << " inputs";
  if (getAccesses().size() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but "
                         << getAccesses().size() << " accesses";
  if (failed(verifySymbols(*this, type, getSymbols())))
    return failure();

  auto dims = domainNames(type);
  auto syms = symbolNames(getSymbols());
  llvm::SmallVector<IntegerSet> conditions;
  for (unsigned k = 0, e = getCases().size(); k < e; ++k)
    conditions.push_back(getCondition(k));
  bool someCaseIsBase = false, readsSelf = false;
  for (auto [k, region] : llvm::enumerate(getCases())) {
    IntegerSet condition = conditions[k];
    if (failed(verifyCondition(*this, k, condition, type, getSymbols())))
      return failure();
    unsigned start = getCaseInputStart(k);
    bool readsSelfAtPoint = false;
    for (unsigned a = 0, e = region.getNumArguments(); a < e; ++a) {
      unsigned i = start + a;
      Value producer = getInputs()[i];
      AccessAttr access = getAccess(i);
      if (failed(verifyAccess(*this, i, producer, access, type, getSymbols())))
        return failure();
      Type expected = accessedType(cast<ValueType>(producer.getType()), access);
      Type actual = region.getArgument(a).getType();
      if (expected != actual)
        return emitOpError()
               << "body argument #" << a << " of case #" << k << " has type "
               << actual << ", but access " << describeValue(producer)
               << formatAccess(access, dims, syms) << " gives " << expected;
      if (failed(verifyLowerEdges(*this, getResult(), k, conditions, producer,
                                  access, type, getSymbols())))
        return failure();
      if (producer == getResult()) {
        bool allPoints = true;
        for (size_t j = 0; j < access.getNumEntries(); ++j)
          allPoints &= !access.isSlice(j);
        readsSelfAtPoint |= allPoints;
        readsSelf = true;
      }
    }
    // A case that can never hold defines nothing, base case or not.
    someCaseIsBase |= !readsSelfAtPoint && !isSurelyFalse(condition);
  }
  if (readsSelf && !someCaseIsBase)
    return emitOpError()
           << "recurrence without a base case: every case of "
           << describeValue(getResult())
           << " reads the node itself; add a case that does not, e.g. "
              "case (" << (dims.empty() ? "t" : dims.back()) << " == 0)";
  return success();
}

//===----------------------------------------------------------------------===//
// UdfOp
//===----------------------------------------------------------------------===//

void UdfOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFromAttr(getResult(), getCalleeAttr(), setNameFn);
}

/// pdg.udf "callee" [dims] (%x[...] : type, ...)? -> type attr-dict
ParseResult UdfOp::parse(OpAsmParser &parser, OperationState &state) {
  MLIRContext *ctx = parser.getContext();
  std::string callee;
  if (parser.parseString(&callee))
    return failure();
  state.addAttribute(getCalleeAttrName(state.name),
                     StringAttr::get(ctx, callee));
  NameScope scope;
  scope.collectSymbols = true;
  if (parseDomain(parser, scope))
    return failure();
  llvm::SmallVector<ParsedInput, 2> inputs;
  if (parseInputs(parser, scope, /*withArguments=*/false, inputs))
    return failure();
  RankedTensorType point;
  if (parsePointType(parser, "udf", point) ||
      parser.parseOptionalAttrDict(state.attributes))
    return failure();
  llvm::SmallVector<AffineExpr> remap = sortSymbols(scope, ctx);
  llvm::SmallVector<Attribute> accesses;
  if (finishInputs(parser, state, inputs, scope, remap, accesses))
    return failure();
  addValueOpParts(state, getAccessesAttrName(state.name),
                  getSymbolsAttrName(state.name), scope, accesses, point);
  return success();
}

void UdfOp::print(OpAsmPrinter &p) {
  p << " \"" << getCallee() << "\"";
  ValueType type = getValueType();
  p << " [" << llvm::join(domainNames(type), ", ") << "]";
  printInputs(p, *this, getInputs(), getAccesses(), 0, nullptr, type,
              getSymbols());
  p << " -> " << type.getPointType();
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getCalleeAttrName(), getAccessesAttrName(),
                           getSymbolsAttrName()});
}

LogicalResult UdfOp::verify() {
  ValueType type = getValueType();
  if (getCallee().empty())
    return emitOpError("a udf needs the name of the host function it calls");
  if (failed(verifyDomainDeclared(*this, type, "udf '" + getCallee().str() +
                                                   "'")))
    return failure();
  if (getAccesses().size() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but "
                         << getAccesses().size() << " accesses";
  if (failed(verifySymbols(*this, type, getSymbols())))
    return failure();
  for (auto [i, producer] : llvm::enumerate(getInputs())) {
    if (failed(verifyAccess(*this, i, producer, getAccess(i), type,
                            getSymbols())))
      return failure();
    if (producer == getResult())
      return emitOpError("a udf cannot read its own result");
    IntegerSet always = getAlwaysTrueSet(type.getRank(), getSymbols().size(),
                                         getContext());
    if (failed(verifyLowerEdges(*this, getResult(), 0, {always}, producer,
                                getAccess(i), type, getSymbols())))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// YieldOp / PointOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  auto node = (*this)->getParentOfType<NodeOp>();
  Type expected = node.getValueType().getPointType();
  if (getValue().getType() != expected)
    return emitOpError() << "yields " << getValue().getType()
                         << ", but the node's value at one point is "
                         << expected;
  return success();
}

LogicalResult PointOp::verify() {
  auto node = (*this)->getParentOfType<NodeOp>();
  if (!node)
    return emitOpError("must be inside the body of a pdg.node");
  ValueType type = node.getValueType();
  if (type.getDimPosition(getDim()) < 0)
    return emitOpError() << "dim '" << getDim()
                         << "' is not in the node's domain ["
                         << llvm::join(domainNames(type), ", ") << "]";
  return success();
}
