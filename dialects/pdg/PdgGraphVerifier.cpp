//===- PdgGraphVerifier.cpp - whole-graph checks of pdg.graph -------------===//
//
// Checks that need the whole graph: unique names, and cycles in which a value
// depends on itself at the same point. The exact legality analysis (reads
// from the future, lexicographic distances) is done with isl by the analysis
// passes; this verifier only rejects what no schedule can ever run.
//
//===----------------------------------------------------------------------===//

#include "AffineSyntax.h"
#include "PdgOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::pdg;

namespace {
/// A consumer reading a producer, with the access used.
struct Edge {
  Operation *producer;
  AccessAttr access;
  Value value;
};
} // namespace

/// True if the access can never read the consumer's own point along some
/// dim both domains share: `t - 1`, a slice ending at or before `t`, ...
static bool surelyReadsAnotherPoint(ValueType consumer, ValueType producer,
                                    AccessAttr access) {
  for (size_t j = 0, e = access.getNumEntries(); j < e; ++j) {
    int64_t i = consumer.getDimPosition(producer.getDomain()[j].getValue());
    if (i < 0)
      continue;
    auto offsetFromSameDim = [&](AffineExpr expr) -> std::optional<int64_t> {
      auto m = matchDimPlusConstant(expr);
      if (m && m->first == static_cast<unsigned>(i))
        return m->second;
      return std::nullopt;
    };
    if (!access.isSlice(j)) {
      auto c = offsetFromSameDim(access.getLowerBounds(j)[0]);
      if (c && *c != 0)
        return true;
      continue;
    }
    for (AffineExpr ub : access.getUpperBounds(j))
      if (auto c = offsetFromSameDim(ub); c && *c <= 0)
        return true; // every index read is < i
    for (AffineExpr lb : access.getLowerBounds(j))
      if (auto c = offsetFromSameDim(lb); c && *c > 0)
        return true; // every index read is > i
  }
  return false;
}

static LogicalResult verifyUniqueNames(GraphOp graph) {
  llvm::StringMap<Operation *> inputs, outputs, bounds;
  for (Operation &op : graph.getBodyBlock()) {
    if (auto in = dyn_cast<InputOp>(op)) {
      auto [it, fresh] = inputs.try_emplace(in.getName(), &op);
      if (!fresh)
        return (in.emitOpError()
                << "input name '" << in.getName() << "' is already used")
                   .attachNote(it->second->getLoc())
               << "first input named '" << in.getName() << "' is here";
    } else if (auto out = dyn_cast<OutputOp>(op)) {
      auto [it, fresh] = outputs.try_emplace(out.getName(), &op);
      if (!fresh)
        return (out.emitOpError()
                << "output name '" << out.getName() << "' is already used")
                   .attachNote(it->second->getLoc())
               << "first output named '" << out.getName() << "' is here";
    } else if (auto dim = dyn_cast<DimOp>(op)) {
      if (!dim.getBound())
        continue;
      llvm::StringRef bound = *dim.getBound();
      if (graph.lookupDim(bound))
        return dim.emitOpError()
               << "bound symbol '" << bound
               << "' is also the name of a dim; use another name, e.g. '"
               << bound.upper() << "'";
      auto [it, fresh] = bounds.try_emplace(bound, &op);
      if (!fresh)
        return (dim.emitOpError()
                << "bound symbol '" << bound << "' is already the bound of '"
                << cast<DimOp>(it->second).getSymName() << "'")
                   .attachNote(it->second->getLoc())
               << "first bound here";
    }
  }
  return success();
}

/// Finds a cycle of same-point dependences with an iterative depth-first
/// search and reports it at the first node of the cycle.
static LogicalResult verifyNoSamePointCycle(GraphOp graph) {
  llvm::DenseMap<Operation *, llvm::SmallVector<Edge>> edges;
  llvm::SmallVector<Operation *> nodes;
  for (Operation &op : graph.getBodyBlock()) {
    auto addEdges = [&](ValueType type, ValueRange inputs, ArrayAttr accesses) {
      nodes.push_back(&op);
      auto &out = edges[&op];
      for (auto [value, attr] : llvm::zip(inputs, accesses)) {
        Operation *producer = value.getDefiningOp();
        if (!producer ||
            !(isa<NodeOp, UdfOp>(producer) || isCollective(producer)))
          continue;
        auto access = cast<AccessAttr>(attr);
        if (!surelyReadsAnotherPoint(type, cast<ValueType>(value.getType()),
                                     access))
          out.push_back({producer, access, value});
      }
    };
    if (auto node = dyn_cast<NodeOp>(op))
      addEdges(node.getValueType(), node.getInputs(), node.getAccesses());
    else if (auto udf = dyn_cast<UdfOp>(op))
      addEdges(udf.getValueType(), udf.getInputs(), udf.getAccesses());
    else if (isCollective(&op)) {
      // A collective reads its input at its own point of every shared dim.
      nodes.push_back(&op);
      Value input = op.getOperand(0);
      Operation *producer = input.getDefiningOp();
      if (producer && !isa<InputOp>(producer))
        edges[&op].push_back({producer, AccessAttr(), input});
    }
  }

  enum Color { White, Grey, Black };
  llvm::DenseMap<Operation *, Color> color;
  for (Operation *root : nodes) {
    if (color[root] != White)
      continue;
    // Stack of (node, next edge index); the grey path is the stack itself.
    llvm::SmallVector<std::pair<Operation *, size_t>> stack = {{root, 0}};
    color[root] = Grey;
    while (!stack.empty()) {
      auto &[op, next] = stack.back();
      auto &out = edges[op];
      if (next == out.size()) {
        color[op] = Black;
        stack.pop_back();
        continue;
      }
      Edge edge = out[next++];
      Color c = color[edge.producer];
      if (c == White) {
        color[edge.producer] = Grey;
        stack.push_back({edge.producer, 0});
        continue;
      }
      if (c != Grey)
        continue;
      // Found a cycle: the stack from edge.producer to op, then back.
      std::string path;
      bool inCycle = false;
      for (auto &[member, _] : stack) {
        inCycle |= member == edge.producer;
        if (inCycle)
          path += describeValue(member->getResult(0)) + " -> ";
      }
      path += describeValue(edge.producer->getResult(0));
      Operation *consumer = op;
      return consumer->emitOpError()
             << "depends on itself at the same point through " << path
             << "; one read in the cycle must be of an earlier point, e.g. "
                "t - 1 or a slice ending at t";
    }
  }
  return success();
}

LogicalResult GraphOp::verifyRegions() {
  Block &body = getBodyBlock();
  if (body.getNumArguments() != 0)
    return emitOpError("a graph's body takes no block arguments; program "
                       "inputs are pdg.input ops");
  for (Operation &op : body)
    if (!isa<DimOp, InputOp, NodeOp, UdfOp, OutputOp>(op) && !isCollective(&op))
      return op.emitOpError()
             << "cannot appear directly in a pdg.graph, which holds only "
                "pdg.dim, pdg.input, pdg.node, pdg.udf, pdg.output and the "
                "collectives (pdg.all_reduce, pdg.all_gather, pdg.broadcast, "
                "pdg.reduce_scatter, pdg.shift)";
  if (failed(verifyUniqueNames(*this)))
    return failure();
  return verifyNoSamePointCycle(*this);
}
