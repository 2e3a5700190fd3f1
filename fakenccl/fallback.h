// Copyright 2026 The cuhal Authors.
// The answer of the entry points of nccl.h that fakenccl does not model. Their definitions are
// generated at build time (cmake/CuhalApiSurface.cmake, cmake/api_fallbacks.cmake): the build
// lists what nccl.h declares (preprocessed by the compiler) and what fakenccl's objects define
// (nm), and gives every declared function no object defines a fallback under its nccl.h name
// (and, in the drop-in libnccl.so.2, its pnccl* alias). docs/api_coverage.md lists which is
// which; a fallback is never claimed as modelled.
//
// This header does not include nccl.h: the generated source declares the functions with asm
// labels and no parameters (a fallback reads no argument), which would conflict with nccl.h.
#ifndef CUHAL_FAKENCCL_FALLBACK_H_
#define CUHAL_FAKENCCL_FALLBACK_H_

namespace fakenccl {

// The answer of a fallback, as an ncclResult_t (an int here): no FakeNccl installed,
// ncclInvalidUsage (as every modelled entry point); the fault injector counts the call under
// `name` (FAKENCCL_FAULTS names it) and may fail it; else ncclInvalidUsage, with the calling
// thread's ncclGetLastError text "fakenccl: <name> is not modelled by fakenccl". A caller can act
// on ncclInvalidUsage (it is not a transient or system error). UNMEASURED: NCCL 2.28 has every
// one of these functions; this is not what it answers.
int FallbackCall(const char* name) noexcept;

}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_FALLBACK_H_
