// Copyright 2026 The cuhal Authors.
// Communicator lifecycle: initialization (ncclCommInitRank*, ncclCommInitAll and their
// rendezvous), ncclCommSplit, finalize, destroy, abort, asynchronous errors and queries, and the
// user reduction operators (ncclRedOpCreatePreMulSum). These are Engine methods (engine.h); this
// pair holds their definitions and the handle-value helpers the call checks share.
#ifndef CUHAL_FAKENCCL_INTERNAL_COMMUNICATOR_H_
#define CUHAL_FAKENCCL_INTERNAL_COMMUNICATOR_H_

#include <nccl.h>

namespace fakenccl {
namespace internal {

// NCCL's ncclUserRedOpMangle (its own inverse), keyed on the handle value.
int Mangle(ncclComm_t comm, int op);
// Whether a raw data type value is one of nccl.h's.
bool ValidType(int raw);

}  // namespace internal
}  // namespace fakenccl

#endif  // CUHAL_FAKENCCL_INTERNAL_COMMUNICATOR_H_
