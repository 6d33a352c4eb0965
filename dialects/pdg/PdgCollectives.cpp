//===- PdgCollectives.cpp - verifiers of the collectives ------------------===//
//
// What every collective checks: the dim it communicates over is a worker
// dim of the graph and the input is defined over it. The result of one that
// gives every rank the same value (all_reduce, all_gather, broadcast) is
// defined over the input's other dims, in the same order; the result of one
// that gives each rank its own point (reduce_scatter, shift) over the
// input's domain. Then each op checks its point types.
//
//===----------------------------------------------------------------------===//

#include "PdgOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pdg;

static std::string joinDims(ValueType type) {
  return "[" + llvm::join(domainNames(type), ", ") + "]";
}

bool mlir::pdg::isCollective(Operation *op) {
  return isa<AllReduceOp, AllGatherOp, BroadcastOp, ReduceScatterOp, ShiftOp>(
      op);
}

/// The dim and input checks shared by every collective.
static LogicalResult verifyWorkerInput(Operation *op, ValueType input,
                                       ValueType result, llvm::StringRef over) {
  if (failed(verifyDomainDeclared(op, input, "the input")) ||
      failed(verifyDomainDeclared(op, result, "the result")))
    return failure();
  auto graph = op->getParentOfType<GraphOp>();
  DimOp dim = graph ? graph.lookupDim(over) : DimOp();
  if (graph && !dim)
    return op->emitOpError()
           << "communicates over unknown dim '" << over
           << "'; declare a worker dim, e.g. `pdg.dim @" << over
           << " < world W`";
  if (dim && !dim.getWorker())
    return op->emitOpError()
           << "communicates over '" << over
           << "', which is not a worker dim; collectives combine the ranks' "
              "points of a dim declared `pdg.dim @"
           << over << " < world W`";
  if (input.getDimPosition(over) < 0)
    return op->emitOpError()
           << "input " << describeValue(op->getOperand(0))
           << " is defined over " << joinDims(input) << ", not over '" << over
           << "'; a collective combines the ranks' points of a value over "
              "the worker dim";
  return success();
}

/// A collective whose result is the same on every rank (see the file
/// comment).
static LogicalResult verifyCollective(Operation *op, ValueType input,
                                      ValueType result, llvm::StringRef over) {
  if (failed(verifyWorkerInput(op, input, result, over)))
    return failure();
  if (result.getDimPosition(over) >= 0)
    return op->emitOpError()
           << "result is defined over '" << over
           << "', the dim it communicates over; the result is the same on "
              "every rank, so its domain is the input's without '"
           << over << "'";
  llvm::SmallVector<StringAttr> expected;
  for (StringAttr d : input.getDomain())
    if (d.getValue() != over)
      expected.push_back(d);
  if (llvm::ArrayRef<StringAttr>(expected) != result.getDomain())
    return op->emitOpError()
           << "result is defined over " << joinDims(result)
           << ", but the input's domain without '" << over << "' is ["
           << llvm::join(llvm::map_range(expected,
                                         [](StringAttr s) {
                                           return s.getValue().str();
                                         }),
                         ", ")
           << "]";
  return success();
}

/// A collective that gives each rank its own point: the result keeps the
/// input's domain.
static LogicalResult verifyRankwise(Operation *op, ValueType input,
                                    ValueType result, llvm::StringRef over) {
  if (failed(verifyWorkerInput(op, input, result, over)))
    return failure();
  if (input.getDomain() != result.getDomain())
    return op->emitOpError()
           << "result is defined over " << joinDims(result)
           << ", but each rank gets a point of its own, so the result keeps "
              "the input's domain "
           << joinDims(input);
  return success();
}

/// The element types a reduction combines: floats and integers.
static LogicalResult verifyReducible(Operation *op, Reduction reduction,
                                     Type element, llvm::StringRef what) {
  if (isa<FloatType>(element) ||
      (element.isSignlessInteger() && element.getIntOrFloatBitWidth() > 1))
    return success();
  return op->emitOpError() << "cannot " << stringifyReduction(reduction)
                           << " elements of type " << element << "; " << what
                           << " takes floats or integers";
}

/// Names the result after its `name`, or else after its input.
static void nameAfterInput(Value result, Value input, llvm::StringRef suffix,
                           OpAsmSetValueNameFn setNameFn) {
  if (auto own = result.getDefiningOp()->getAttrOfType<StringAttr>("name");
      own && !own.getValue().empty()) {
    setNameFn(result, own.getValue());
    return;
  }
  Operation *def = input.getDefiningOp();
  auto name = def ? def->getAttrOfType<StringAttr>("name") : StringAttr();
  if (name && !name.getValue().empty())
    setNameFn(result, (name.getValue() + "_" + suffix).str());
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

void AllReduceOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameAfterInput(getResult(), getInput(), stringifyReduction(getReduction()),
                 setNameFn);
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyCollective(*this, getInputType(), getValueType(),
                              getOver())))
    return failure();
  RankedTensorType in = getInputType().getPointType();
  RankedTensorType out = getValueType().getPointType();
  if (in != out)
    return emitOpError() << "reduces points of type " << in
                         << " into points of type " << out
                         << "; an all-reduce keeps the point type";
  return verifyReducible(*this, getReduction(), in.getElementType(),
                         "an all-reduce");
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

void AllGatherOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameAfterInput(getResult(), getInput(), "gathered", setNameFn);
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyCollective(*this, getInputType(), getValueType(),
                              getOver())))
    return failure();
  RankedTensorType in = getInputType().getPointType();
  RankedTensorType out = getValueType().getPointType();
  // The ranks stacked along a leading dim of the world's size, which is
  // known only at launch.
  llvm::SmallVector<int64_t> shape = {ShapedType::kDynamic};
  shape.append(in.getShape().begin(), in.getShape().end());
  auto expected = RankedTensorType::get(shape, in.getElementType());
  if (out != expected)
    return emitOpError() << "gathers points of type " << in
                         << " into points of type " << out << ", expected "
                         << expected << " (a leading dim, one row per rank)";
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

void BroadcastOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameAfterInput(getResult(), getInput(), "broadcast", setNameFn);
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyCollective(*this, getInputType(), getValueType(),
                              getOver())))
    return failure();
  // The generated accessor reads the attribute as unsigned: read it signed.
  int64_t root = getRootAttr().getInt();
  if (root < 0)
    return emitOpError() << "root rank " << root
                         << " is negative; ranks are 0, 1, ..., W - 1";
  auto graph = (*this)->getParentOfType<GraphOp>();
  DimOp dim = graph ? graph.lookupDim(getOver()) : DimOp();
  if (dim && dim.getSizeAttr() && root >= dim.getSizeAttr().getInt())
    return emitOpError() << "root rank " << root << " is past the "
                         << dim.getSizeAttr().getInt() << " ranks that dim '"
                         << getOver() << "' allows (its max)";
  RankedTensorType in = getInputType().getPointType();
  RankedTensorType out = getValueType().getPointType();
  if (in != out)
    return emitOpError() << "broadcasts points of type " << in
                         << " as points of type " << out
                         << "; a broadcast keeps the point type";
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

void ReduceScatterOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameAfterInput(getResult(), getInput(), "scattered", setNameFn);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyRankwise(*this, getInputType(), getValueType(), getOver())))
    return failure();
  RankedTensorType in = getInputType().getPointType();
  RankedTensorType out = getValueType().getPointType();
  if (in.getRank() == 0)
    return emitOpError() << "input points of type " << in
                         << " have no leading dim to scatter; give them a "
                            "leading dim of W blocks, one per rank";
  auto expected =
      RankedTensorType::get(in.getShape().drop_front(), in.getElementType());
  if (out != expected)
    return emitOpError() << "scatters points of type " << in
                         << " into points of type " << out << ", expected "
                         << expected << " (one block of the leading dim)";
  auto graph = (*this)->getParentOfType<GraphOp>();
  DimOp dim = graph ? graph.lookupDim(getOver()) : DimOp();
  int64_t blocks = in.getShape().front();
  if (dim && dim.getSizeAttr() && !ShapedType::isDynamic(blocks) &&
      blocks > dim.getSizeAttr().getInt())
    return emitOpError() << "input points have " << blocks
                         << " blocks, more than the "
                         << dim.getSizeAttr().getInt() << " ranks that dim '"
                         << getOver() << "' allows (its max)";
  return verifyReducible(*this, getReduction(), in.getElementType(),
                         "a reduce-scatter");
}

//===----------------------------------------------------------------------===//
// ShiftOp
//===----------------------------------------------------------------------===//

void ShiftOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  nameAfterInput(getResult(), getInput(), "shifted", setNameFn);
}

LogicalResult ShiftOp::verify() {
  if (failed(verifyRankwise(*this, getInputType(), getValueType(), getOver())))
    return failure();
  RankedTensorType in = getInputType().getPointType();
  RankedTensorType out = getValueType().getPointType();
  if (in != out)
    return emitOpError() << "shifts points of type " << in
                         << " as points of type " << out
                         << "; a shift keeps the point type";
  return success();
}
