// Copyright 2026 The cuhal Authors.
// The private driver interfaces ("export tables") that the CUDA runtime (libcudart) asks
// cuGetExportTable for, by UUID, before it makes any documented driver call of its own
// (issue 17; docs/cudart_on_the_fake.md says which tables and slots, what each one does and how
// that is known). A table is an array of pointer-sized words: a size word (the table's size in
// bytes) in the first slot of most tables, then function pointers; a slot the fake leaves NULL
// is one whose meaning is not known and that the runtime has not been seen to call.
#ifndef CUHAL_FAKECUDA_INTERNAL_EXPORT_TABLES_H_
#define CUHAL_FAKECUDA_INTERNAL_EXPORT_TABLES_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace fakecuda {

// ExportTables: the tables cuGetExportTable hands out (all static members: there is nothing to
// construct).
//
// Owner: the process. The tables are immutable data with static storage duration, the same for
// every driver instance: the runtime keeps the pointers for the life of the process, and one slot
// (the integrity check) hashes the tables' own addresses, so they never move or change. What the
// slots do is done on the driver installed at the time of the call (InstalledState()), through
// its lock; the one piece of state of their own, the context-local storage, is keyed by the
// driver's serial, has its own mutex, and is never held while the driver lock is taken or a
// runtime callback runs.
// Thread-safety: every function here and every slot may be called from any thread at any time.
// The slots that use the driver answer as its entry points do when none is installed or before
// cuInit (CUDA_ERROR_NOT_INITIALIZED) and on its callback lanes (CUDA_ERROR_NOT_PERMITTED), and
// take part in fault injection: cudart_interface[2] and context_local_storage[0-2] under those
// names, the module and integrity slots through the entry points they call (cuModuleLoadData,
// cuDeviceGetCount, ...); the others (the callback-hook buffers, the context checks) answer the
// same at any time. context_local_storage also tells the leak report which primary-context
// retains are the runtime's own (Device::runtime_retains in context_table.h): a put marks the
// context's latest retain as the runtime's, a delete marks the next release as the runtime's.
// Stream ordering: no slot enqueues work on a stream or waits for one; a module load through a
// slot completes before the slot returns, as cuModuleLoadData does.
class ExportTables {
 public:
  ExportTables() = delete;  // static members only

  // The table for `id`, or null when the fake does not serve that UUID (cuGetExportTable then
  // answers CUDA_ERROR_NOT_SUPPORTED).
  static const void* Find(const CUuuid& id) noexcept;
  // The fake's name of the table `id` ("cudart_interface"), or null when it serves none.
  static const char* Name(const CUuuid& id) noexcept;
  // Whether FAKECUDA_TRACE_EXPORT_TABLE is set to a value other than "0" (read once): then
  // cuGetExportTable and every slot call print one line each to stderr.
  static bool TraceOn() noexcept;
  // Runs and forgets the context-local-storage values of the context `ctx_id` of the driver with
  // serial `driver_serial` (the runtime's per-context state), calling each value's destructor
  // callback as (context, key, value), as the driver does when a context is destroyed (ZLUDA
  // calls them on a primary context's reset). Called by the entry points that destroy a context,
  // before they do, without the driver lock: a callback may call the driver.
  static void OnContextDestroy(std::uint64_t driver_serial, std::uint64_t ctx_id) noexcept;
  // Prints "fakecuda: export table: <format...>\n" to stderr when TraceOn().
  static void Trace(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));
};

// MD2 (RFC 1319) of `size` bytes at `data`, and HMAC (RFC 2104) over MD2 with a 16-byte key (MD2's
// block size, so the key is used as it is): the integrity-check slot's hash. Exposed for tests.
void Md2(const void* data, std::size_t size, unsigned char digest[16]) noexcept;
void HmacMd2(const unsigned char key[16], const void* message, std::size_t size,
             unsigned char digest[16]) noexcept;

}  // namespace fakecuda

#endif  // CUHAL_FAKECUDA_INTERNAL_EXPORT_TABLES_H_
