#include "plugin/load_error.h"

namespace nccom::plugin {

const char* to_string(LoadErrorKind kind) {
  switch (kind) {
    case LoadErrorKind::NotFound: return "NotFound";
    case LoadErrorKind::InvalidFile: return "InvalidFile";
    case LoadErrorKind::DlopenFailed: return "DlopenFailed";
    case LoadErrorKind::MissingSymbol: return "MissingSymbol";
    case LoadErrorKind::AbiMismatch: return "AbiMismatch";
    case LoadErrorKind::BadDescriptor: return "BadDescriptor";
    case LoadErrorKind::NullSlot: return "NullSlot";
    case LoadErrorKind::InitFailed: return "InitFailed";
    case LoadErrorKind::DuplicateName: return "DuplicateName";
    case LoadErrorKind::BadConfiguration: return "BadConfiguration";
  }
  return "Unknown";
}

}  // namespace nccom::plugin
