// Copyright 2026 The cuhal Authors.
// The PTX of cli/kernels/demo_kernels.cu, compiled by nvcc when cuhal was built and embedded in
// the cuhal program (cli/CMakeLists.txt; the definitions are generated).
#ifndef CUHAL_CLI_DEMO_PTX_H_
#define CUHAL_CLI_DEMO_PTX_H_

#include <string_view>

namespace cuhal::cli {

// The PTX text nvcc made (NUL-terminated after its last character, as cuModuleLoadData needs);
// empty when nvcc was not used, and then DemoPtxMissing() says why.
std::string_view DemoPtx();
// Why DemoPtx() is empty ("nvcc was not found when cuhal was configured ..."); empty otherwise.
std::string_view DemoPtxMissing();

}  // namespace cuhal::cli

#endif  // CUHAL_CLI_DEMO_PTX_H_
