//===- PdgPythonModule.cpp - the _pdg_ext Python extension ----------------===//
//
// Carries the pdg dialect into the installed `mlir` Python package (one MLIR
// instance in the process): dialect registration, Python classes for
// !pdg.value and #pdg.access, parsing with real file names, and the pass
// registry queries pdg-opt needs.
//
//===----------------------------------------------------------------------===//

#include "PdgDialect.h"
#include "Passes.h"
#include "UpstreamParserGuards.h"
#include "UpstreamVerifierGuards.h"

#include "mlir-c/IR.h"
#include "mlir/Bindings/Python/IRCore.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/AffineMap.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

namespace nb = nanobind;
using namespace mlir::python::nanobind_adaptors;

namespace mlir::python::MLIR_BINDINGS_PYTHON_DOMAIN::pdg_ext {

/// Runs `build` with diagnostics captured; throws ValueError with their text
/// if it returns null, so that bad arguments never reach an assertion.
template <typename T, typename F>
T buildChecked(MLIRContext *ctx, F build) {
  std::string errors;
  T result;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      errors += (errors.empty() ? "" : "\n") + d.str();
      return success();
    });
    result = build([ctx] { return emitError(UnknownLoc::get(ctx)); });
  }
  if (!result)
    throw nb::value_error(errors.empty() ? "invalid arguments"
                                         : errors.c_str());
  return result;
}

static bool isValueType(MlirType t) { return isa<pdg::ValueType>(unwrap(t)); }
static MlirTypeID valueTypeId() { return wrap(TypeID::get<pdg::ValueType>()); }
static bool isAccessAttr(MlirAttribute a) {
  return isa<pdg::AccessAttr>(unwrap(a));
}
static MlirTypeID accessAttrId() {
  return wrap(TypeID::get<pdg::AccessAttr>());
}

struct PyValueType : PyConcreteType<PyValueType> {
  static constexpr IsAFunctionTy isaFunction = isValueType;
  static constexpr GetTypeIDFunctionTy getTypeIdFunction = valueTypeId;
  static constexpr const char *pyClassName = "ValueType";
  using Base::Base;

  static void bindDerived(ClassTy &c) {
    c.def_static(
        "get",
        [](const std::vector<std::string> &domain, MlirType pointType) {
          MLIRContext *ctx = unwrap(pointType).getContext();
          MlirContext context = wrap(ctx);
          auto point = dyn_cast<RankedTensorType>(unwrap(pointType));
          if (!point)
            throw nb::value_error(
                "the per-point type of a pdg value must be a ranked tensor");
          llvm::SmallVector<StringAttr> dims;
          for (const std::string &d : domain)
            dims.push_back(StringAttr::get(ctx, d));
          auto type = buildChecked<pdg::ValueType>(ctx, [&](auto emit) {
            return pdg::ValueType::getChecked(emit, ctx,
                                              llvm::ArrayRef<StringAttr>(dims),
                                              point);
          });
          return PyValueType(PyMlirContext::forContext(context), wrap(type));
        },
        nb::arg("domain"), nb::arg("point_type"),
        "!pdg.value<[domain...], point_type>, in point_type's context.");
    c.def_prop_ro("domain", [](PyValueType &self) {
      std::vector<std::string> out;
      for (StringAttr d : cast<pdg::ValueType>(unwrap(self.get())).getDomain())
        out.push_back(d.getValue().str());
      return out;
    });
    c.def_prop_ro("point_type", [](PyValueType &self) -> MlirType {
      return wrap(cast<pdg::ValueType>(unwrap(self.get())).getPointType());
    });
  }
};

struct PyAccessAttr : PyConcreteAttribute<PyAccessAttr> {
  static constexpr IsAFunctionTy isaFunction = isAccessAttr;
  static constexpr GetTypeIDFunctionTy getTypeIdFunction = accessAttrId;
  static constexpr const char *pyClassName = "AccessAttr";
  using Base::Base;

  static pdg::AccessAttr attr(PyAccessAttr &self) {
    return cast<pdg::AccessAttr>(unwrap(self.get()));
  }

  static void bindDerived(ClassTy &c) {
    c.def_static(
        "get",
        [](MlirAffineMap map, const std::vector<int64_t> &layout) {
          MLIRContext *ctx = unwrap(map).getContext();
          MlirContext context = wrap(ctx);
          auto access = buildChecked<pdg::AccessAttr>(ctx, [&](auto emit) {
            return pdg::AccessAttr::getChecked(
                emit, ctx, unwrap(map), llvm::ArrayRef<int64_t>(layout));
          });
          return PyAccessAttr(PyMlirContext::forContext(context),
                              wrap(access));
        },
        nb::arg("exprs"), nb::arg("layout"),
        "An access from a flattened affine map and [#lbs, #ubs] per entry, in "
        "the map's context.");
    c.def_prop_ro("exprs", [](PyAccessAttr &self) -> MlirAffineMap {
      return wrap(attr(self).getExprs());
    });
    c.def_prop_ro("layout", [](PyAccessAttr &self) {
      auto layout = attr(self).getLayout();
      return std::vector<int64_t>(layout.begin(), layout.end());
    });
    c.def_prop_ro("num_entries",
                  [](PyAccessAttr &self) { return attr(self).getNumEntries(); });
    c.def(
        "is_slice",
        [](PyAccessAttr &self, size_t entry) {
          if (entry >= attr(self).getNumEntries())
            throw nb::index_error("access entry out of range");
          return attr(self).isSlice(entry);
        },
        nb::arg("entry"));
  }
};

/// Parses `source` as a module whose locations name `filename`. Returns None
/// on failure; the diagnostics go to the context's handlers.
static nb::object parseSource(const std::string &source,
                              const std::string &filename,
                              MlirContext context, bool verify) {
  MLIRContext *ctx = unwrap(context);
  if (!pdg::checkUpstreamParserGuards(source, filename, ctx))
    return nb::none();
  // Verified here rather than by the parser, so that pdg's checks of what
  // upstream's verifiers mishandle run around them.
  ParserConfig config(ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, config, filename);
  if (!module || !pdg::checkBeforeUpstreamVerifiers(*module))
    return nb::none();
  if (verify && (failed(::mlir::verify(*module)) ||
                 !pdg::checkAfterUpstreamVerifiers(*module)))
    return nb::none();
  return nb::cast(wrap(module.release()));
}

/// The constraints of an integer set as one affine map (a result per
/// constraint) and whether each is an equality (else `>= 0`).
static nb::tuple integerSetParts(MlirAttribute attr) {
  auto setAttr = dyn_cast<IntegerSetAttr>(unwrap(attr));
  if (!setAttr)
    throw nb::type_error("expected an IntegerSetAttr");
  IntegerSet set = setAttr.getValue();
  AffineMap map = AffineMap::get(set.getNumDims(), set.getNumSymbols(),
                                 set.getConstraints(), set.getContext());
  std::vector<bool> eq;
  for (unsigned i = 0, e = set.getNumConstraints(); i < e; ++i)
    eq.push_back(set.isEq(i));
  return nb::make_tuple(wrap(map), eq);
}

/// "static", "launch" or "dynamic" for a #pdg<bound ...> attribute.
static std::string boundKindName(MlirAttribute attr) {
  auto kind = dyn_cast<pdg::BoundKindAttr>(unwrap(attr));
  if (!kind)
    throw nb::type_error("expected a #pdg<bound ...> attribute");
  return pdg::stringifyBoundKind(kind.getValue()).str();
}

static void registerDialect(MlirContext context, bool load) {
  MLIRContext *ctx = unwrap(context);
  DialectRegistry registry;
  registry.insert<pdg::PdgDialect>();
  ctx->appendDialectRegistry(registry);
  if (load)
    ctx->getOrLoadDialect<pdg::PdgDialect>();
  // Diagnostics carry file:line:col and a message; a dump of the whole op in
  // a note buries them.
  ctx->printOpOnDiagnostic(false);
}

static bool isRegisteredPass(const std::string &name) {
  return PassInfo::lookup(name) || PassPipelineInfo::lookup(name);
}

/// Adds a textual pass list ("canonicalize,pdg-dce") to a module-level `pm`,
/// nesting each pass anchored on another op (pdg.graph, func.func) under
/// that op, as mlir-opt's pass flags do. The list is first parsed into an
/// op-agnostic pass manager to learn each pass's anchor.
static void addPassPipeline(MlirPassManager pm, const std::string &pipeline) {
  PassManager *manager = unwrap(pm);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  OpPassManager probe;
  if (failed(parsePassPipeline(pipeline, probe, os)))
    throw nb::value_error(errors.c_str());
  for (Pass &pass : probe.getPasses()) {
    std::string text;
    llvm::raw_string_ostream textStream(text);
    pass.printAsTextualPipeline(textStream);
    std::optional<llvm::StringRef> anchor = pass.getOpName();
    OpPassManager &target =
        anchor && *anchor != manager->getOpAnchorName()
            ? manager->nest(*anchor)
            : static_cast<OpPassManager &>(*manager);
    if (failed(parsePassPipeline(text, target, os)))
      throw nb::value_error(errors.c_str());
  }
}

static void populate(nb::module_ &m) {
  // C++ passes join MLIR's global registry, nameable in textual pipelines.
  pdg::registerPdgPasses();
  PyValueType::bind(m);
  PyAccessAttr::bind(m);
  m.def("register_dialect", registerDialect, nb::arg("context") = nb::none(),
        nb::arg("load") = true, "Registers (and loads) the pdg dialect.");
  m.def("parse_source", parseSource, nb::arg("source"), nb::arg("filename"),
        nb::arg("context") = nb::none(), nb::arg("verify") = true,
        "Parses a module; diagnostics carry `filename`. None on failure.");
  m.def("integer_set_parts", integerSetParts, nb::arg("attr"),
        "(affine map of the constraints, [is equality]) of an IntegerSetAttr");
  m.def("bound_kind", boundKindName, nb::arg("attr"),
        "'static', 'launch' or 'dynamic' for a pdg.dim's kind attribute");
  m.def("is_registered_pass", isRegisteredPass, nb::arg("name"));
  m.def("add_pass_pipeline", addPassPipeline, nb::arg("pm"),
        nb::arg("pipeline"));
  m.def("print_registered_passes", [] {
    printRegisteredPasses();
    llvm::outs().flush();
  });
  m.attr("MLIR_VERSION") = LLVM_VERSION_STRING;
}

} // namespace mlir::python::MLIR_BINDINGS_PYTHON_DOMAIN::pdg_ext

NB_MODULE(_pdg_ext, m) {
  m.doc() = "pdg dialect extension for the MLIR Python bindings";
  mlir::python::MLIR_BINDINGS_PYTHON_DOMAIN::pdg_ext::populate(m);
}
