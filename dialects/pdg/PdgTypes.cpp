//===- PdgTypes.cpp - !pdg.value ------------------------------------------===//

#include "AffineSyntax.h"
#include "PdgDialect.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pdg;

bool mlir::pdg::isPlainIdentifier(llvm::StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

#define GET_TYPEDEF_CLASSES
#include "PdgTypes.cpp.inc"

void PdgDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "PdgTypes.cpp.inc"
      >();
}

int64_t ValueType::getDimPosition(llvm::StringRef dim) const {
  for (auto [i, d] : llvm::enumerate(getDomain()))
    if (d.getValue() == dim)
      return i;
  return -1;
}

/// `<[b, t], tensor<64xf32>>`
Type ValueType::parse(AsmParser &parser) {
  llvm::SmallVector<StringAttr> domain;
  RankedTensorType pointType;
  if (parser.parseLess())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            llvm::StringRef name;
            if (parser.parseKeyword(&name))
              return failure();
            domain.push_back(StringAttr::get(parser.getContext(), name));
            return success();
          }))
    return {};
  llvm::SMLoc typeLoc;
  if (parser.parseComma() || parser.getCurrentLocation(&typeLoc) ||
      parser.parseType(pointType) || parser.parseGreater())
    return {};
  return parser.getChecked<ValueType>(parser.getContext(), domain, pointType);
}

void ValueType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDomain(), printer,
                        [&](StringAttr d) { printer << d.getValue(); });
  printer << "], " << getPointType() << ">";
}

LogicalResult
ValueType::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                  llvm::ArrayRef<StringAttr> domain,
                  RankedTensorType pointType) {
  if (!pointType)
    return emitError() << "a pdg value needs a ranked tensor type per point";
  llvm::StringSet<> seen;
  for (StringAttr d : domain) {
    if (!d || !isPlainIdentifier(d.getValue()))
      return emitError() << "dimension name '" << (d ? d.getValue() : "")
                         << "' must be an identifier: a letter or '_', then "
                            "letters, digits or '_'";
    if (!seen.insert(d.getValue()).second)
      return emitError() << "dimension '" << d.getValue()
                         << "' appears twice in the domain";
  }
  return success();
}
