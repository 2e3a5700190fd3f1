// Copyright 2026 The cuhal Authors.
// Pins, with the trompeloeil mock of the CUDA table, the driver calls of an executable's creation
// (and how a failure unwinds it: the module unloaded in the device's context, the caller's
// context restored, the JIT log in the status) and of a command buffer's submission through the
// stream target (one stream operation per command, in recording order, with the bindings of that
// submission; a failing command stops the rest) and through the graph target (one graph built from
// nodes and instantiated once; re-submissions launch it, updated in place by the node setters,
// else through cuGraphExecUpdate, else rebuilt; every failure destroys what it made). Any call no
// expectation matches fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/command/command_buffer.h"
#include "core/command/command_target_kind.h"
#include "core/executable/executable.h"
#include "core/semaphore/event.h"
#include "tests/mocks/mock_cuda_api.h"

namespace cuhal {
namespace {

using ::testing::HasSubstr;
using mocks::MockCudaApi;
using trompeloeil::_;

const CUcontext kPrimary = reinterpret_cast<CUcontext>(0xC0);
const CUmodule kModule = reinterpret_cast<CUmodule>(0x3000);
const CUfunction kAddOne = reinterpret_cast<CUfunction>(0x4001);
const CUfunction kReverse = reinterpret_cast<CUfunction>(0x4002);
const CUstream kStream = reinterpret_cast<CUstream>(0x5000);
const CUevent kEvent = reinterpret_cast<CUevent>(0x6000);
const CUgraph kGraph = reinterpret_cast<CUgraph>(0x7000);
const CUgraph kFreshGraph = reinterpret_cast<CUgraph>(0x7001);
const CUgraph kGraph2 = reinterpret_cast<CUgraph>(0x7002);
const CUgraphExec kExec = reinterpret_cast<CUgraphExec>(0x8000);
const CUgraphExec kExec2 = reinterpret_cast<CUgraphExec>(0x8001);
const CUgraphNode kNodes[] = {reinterpret_cast<CUgraphNode>(0x9001),
                              reinterpret_cast<CUgraphNode>(0x9002),
                              reinterpret_cast<CUgraphNode>(0x9003),
                              reinterpret_cast<CUgraphNode>(0x9004),
                              reinterpret_cast<CUgraphNode>(0x9005)};
constexpr CUdevice kDevice = 0;

struct ContextStack {
  std::vector<CUcontext> entries;
  CUcontext top() const { return entries.empty() ? nullptr : entries.back(); }
};

std::mutex g_dropped_mu;
std::vector<Status> g_dropped;  // guarded by g_dropped_mu
void CaptureDropped(const Status& status) {
  std::lock_guard<std::mutex> lock(g_dropped_mu);
  g_dropped.push_back(status);
}

int DeviceAttribute(CUdevice_attribute a) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    default: return 0;
  }
}

int FunctionAttribute(CUfunction_attribute a) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 256;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: return 1024;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: return 48 * 1024 - 1024;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: return 12;
    default: return 0;
  }
}

// Writes `text` into the CU_JIT_ERROR_LOG_BUFFER of a cuModuleLoadDataEx option list.
void WriteErrorLog(unsigned n, CUjit_option* options, void** values, const char* text) {
  for (unsigned i = 0; i < n; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) std::strcpy(static_cast<char*>(values[i]), text);
  }
}

bool HasLogOptions(unsigned n, const CUjit_option* options) {
  bool error_buffer = false, error_size = false;
  for (unsigned i = 0; i < n; ++i) {
    error_buffer = error_buffer || options[i] == CU_JIT_ERROR_LOG_BUFFER;
    error_size = error_size || options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
  }
  return error_buffer && error_size;
}

class CommandMockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mock_.AllowErrorLookups();
    api_ = mock_.Table();
    ContextStack* stack = &stack_;
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuCtxGetCurrent(_))
                           .SIDE_EFFECT(*_1 = stack->top())
                           .RETURN(CUDA_SUCCESS));
    allowed_.push_back(NAMED_ALLOW_CALL(mock_, cuDeviceGetAttribute(_, _, kDevice))
                           .SIDE_EFFECT(*_1 = DeviceAttribute(_2))
                           .RETURN(CUDA_SUCCESS));
    previous_handler_ = SetDroppedStatusHandler(&CaptureDropped);
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    g_dropped.clear();
  }
  void TearDown() override { SetDroppedStatusHandler(previous_handler_); }

  void ExpectPush() {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPushCurrent(kPrimary))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(stack->entries.push_back(kPrimary))
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectPop() {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuCtxPopCurrent(_))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .SIDE_EFFECT(stack->entries.pop_back())
                          .SIDE_EFFECT(if (_1 != nullptr) *_1 = kPrimary)
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectLoad(CUresult result = CUDA_SUCCESS, const char* log = "") {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuModuleLoadDataEx(_, _, _, _, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary)
                          .WITH(HasLogOptions(_3, _4))
                          .SIDE_EFFECT(if (result == CUDA_SUCCESS) *_1 = kModule)
                          .SIDE_EFFECT(WriteErrorLog(_3, _4, _5, log))
                          .RETURN(result));
  }
  void ExpectFunction(const char* name, CUfunction f, CUresult result = CUDA_SUCCESS) {
    ContextStack* stack = &stack_;
    const std::string n = name;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuModuleGetFunction(_, kModule, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(stack->top() == kPrimary && std::string(_3) == n)
                          .SIDE_EFFECT(if (result == CUDA_SUCCESS) *_1 = f)
                          .RETURN(result));
    if (result != CUDA_SUCCESS) return;
    // Eight attributes, in the order Executable::Create reads them.
    for (CUfunction_attribute a :
         {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_NUM_REGS,
          CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
          CU_FUNC_ATTRIBUTE_PTX_VERSION, CU_FUNC_ATTRIBUTE_BINARY_VERSION}) {
      script_.push_back(NAMED_REQUIRE_CALL(mock_, cuFuncGetAttribute(_, a, f))
                            .IN_SEQUENCE(seq_)
                            .SIDE_EFFECT(*_1 = FunctionAttribute(a))
                            .RETURN(CUDA_SUCCESS));
    }
  }
  void ExpectUnload(bool in_context) {
    ContextStack* stack = &stack_;
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuModuleUnload(kModule))
                          .IN_SEQUENCE(seq_)
                          .WITH(!in_context || stack->top() == kPrimary)
                          .RETURN(CUDA_SUCCESS));
  }
  ExecutableParams Params() {
    ExecutableParams params;
    params.image = ImageBytes(".version 8.0\n.target sm_90\n");
    params.entry_points = {"add_one", "shared_reverse"};
    params.name = "mocked";
    return params;
  }
  std::vector<Status> Dropped() {
    std::lock_guard<std::mutex> lock(g_dropped_mu);
    return g_dropped;
  }

  MockCudaApi mock_;
  CudaApi api_;
  ContextStack stack_;
  trompeloeil::sequence seq_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> allowed_;
  std::vector<std::unique_ptr<trompeloeil::expectation>> script_;
  DroppedStatusHandler previous_handler_ = nullptr;
};

TEST_F(CommandMockTest, ExecutableCreationCallOrder) {
  ExpectPush();
  ExpectLoad();
  ExpectFunction("add_one", kAddOne);
  ExpectFunction("shared_reverse", kReverse);
  ExpectPop();
  StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(&api_, kPrimary, kDevice, Params());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->module(), kModule);
  EXPECT_EQ((*exe)->entry_point(1).value()->function, kReverse);
  EXPECT_EQ((*exe)->entry_point(0).value()->attributes.registers, 12);
  EXPECT_EQ((*exe)->device_limits().max_block_dim[2], 64);
  EXPECT_TRUE(stack_.entries.empty());
  ExpectUnload(/*in_context=*/false);
  exe->reset();
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(CommandMockTest, FailedEntryPointUnloadsTheModuleInContextThenRestores) {
  ExpectPush();
  ExpectLoad();
  ExpectFunction("add_one", kAddOne);
  ExpectFunction("shared_reverse", nullptr, CUDA_ERROR_NOT_FOUND);
  ExpectUnload(/*in_context=*/true);
  ExpectPop();
  StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(&api_, kPrimary, kDevice, Params());
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(exe.status().message(), HasSubstr("entry point 1 (shared_reverse)"));
  EXPECT_THAT(exe.status().message(), HasSubstr("cuModuleGetFunction"));
  EXPECT_THAT(exe.status().message(), HasSubstr("loading executable mocked (PTX,"));
  EXPECT_TRUE(stack_.entries.empty());
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(CommandMockTest, FailedLoadCarriesTheJitLogAndUnloadsNothing) {
  ExpectPush();
  ExpectLoad(CUDA_ERROR_INVALID_PTX, "ptxas fatal: unexpected end of file");
  ExpectPop();
  StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(&api_, kPrimary, kDevice, Params());
  ASSERT_FALSE(exe.ok());
  EXPECT_THAT(exe.status().message(), HasSubstr("cuModuleLoadDataEx"));
  EXPECT_THAT(exe.status().message(),
              HasSubstr("; JIT error log: ptxas fatal: unexpected end of file"));
  EXPECT_TRUE(stack_.entries.empty());
}

TEST_F(CommandMockTest, StreamTargetIssuesOneCallPerCommandInOrderAndStopsAtAFailure) {
  ExpectPush();
  ExpectLoad();
  ExpectFunction("add_one", kAddOne);
  ExpectFunction("shared_reverse", kReverse);
  ExpectPop();
  StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(&api_, kPrimary, kDevice, Params());
  ASSERT_TRUE(exe.ok()) << exe.status();
  // A HAL event.
  ExpectPush();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventCreate(_, CU_EVENT_DISABLE_TIMING))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = kEvent)
                        .RETURN(CUDA_SUCCESS));
  ExpectPop();
  StatusOr<Event> event = Event::Create(&api_, kPrimary);
  ASSERT_TRUE(event.ok()) << event.status();

  CommandBufferParams params;
  params.mode = CommandBufferMode::kReusable;
  params.binding_capacity = 2;
  StatusOr<std::shared_ptr<CommandBuffer>> made = CommandBuffer::Create(&api_, params);
  ASSERT_TRUE(made.ok());
  CommandBuffer& cb = **made;
  const std::uint32_t pattern = 0xA5A5A5A5u;
  ASSERT_TRUE(cb.Fill(BufferRef::Slot(0), &pattern, 4).ok());
  const std::uint32_t words[4] = {1, 2, 3, 4};
  ASSERT_TRUE(cb.Update(std::as_bytes(std::span(words)), BufferRef::Slot(1)).ok());
  ASSERT_TRUE(cb.Copy(BufferRef::Slot(0, 0, 64), BufferRef::Slot(1, 64)).ok());
  ASSERT_TRUE(cb.ExecutionBarrier().ok());
  DispatchConfig config;
  config.workgroups = {3, 1, 1};
  config.block = {128, 1, 1};
  const BufferRef bindings[] = {BufferRef::Slot(1)};
  const std::uint32_t constants[] = {42};
  ASSERT_TRUE(cb.Dispatch(**exe, 0, config, bindings, constants).ok());
  ASSERT_TRUE(cb.SignalEvent(*event).ok());
  const Event* events[] = {&*event};
  ASSERT_TRUE(cb.WaitEvents(events).ok());
  ASSERT_TRUE(cb.End().ok());
  ASSERT_EQ(cb.commands().size(), 7u);

  auto expect_issue = [&](CUdeviceptr a, CUdeviceptr b, CUresult launch) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemsetD32Async(a, pattern, 4096 / 4, kStream))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemcpyHtoDAsync(b, _, 16, kStream))
                          .IN_SEQUENCE(seq_)
                          .WITH(std::memcmp(_2, words, 16) == 0)
                          .RETURN(CUDA_SUCCESS));
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuMemcpyAsync(b + 64, a, 64, kStream))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
    script_.push_back(
        NAMED_REQUIRE_CALL(mock_, cuLaunchKernel(kAddOne, 3, 1, 1, 128, 1, 1, 0, kStream, _,
                                                 nullptr))
            .IN_SEQUENCE(seq_)
            .WITH(*static_cast<CUdeviceptr*>(_10[0]) == b)
            .WITH(*static_cast<std::uint32_t*>(_10[1]) == 42)
            .RETURN(launch));
    if (launch != CUDA_SUCCESS) return;  // nothing after a failed command
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventRecord(kEvent, kStream))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuStreamWaitEvent(kStream, kEvent, 0))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
  };
  // Two submissions over different bindings, then one whose launch fails.
  const ResolvedBinding first[] = {{0x10000, 4096}, {0x20000, 4096}};
  expect_issue(0x10000, 0x20000, CUDA_SUCCESS);
  EXPECT_TRUE(cb.Issue(kStream, first).ok());
  const ResolvedBinding second[] = {{0x70000, 4096}, {0x90000, 4096}};
  expect_issue(0x70000, 0x90000, CUDA_SUCCESS);
  EXPECT_TRUE(cb.Issue(kStream, second).ok());
  expect_issue(0x10000, 0x20000, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  const Status failed = cb.Issue(kStream, first);
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(failed.message(), HasSubstr("command 4 (dispatch)"));
  EXPECT_THAT(failed.message(), HasSubstr("cuLaunchKernel"));
  EXPECT_EQ(cb.statistics().issues, 2u);

  made->reset();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventDestroy(kEvent)).RETURN(CUDA_SUCCESS));
  *event = Event();
  ExpectUnload(/*in_context=*/false);
  exe->reset();
  EXPECT_TRUE(Dropped().empty());
}

// --- the graph target -------------------------------------------------------------------------

class GraphMockTest : public CommandMockTest {
 protected:
  void SetUp() override {
    CommandMockTest::SetUp();
    ExpectPush();
    ExpectLoad();
    ExpectFunction("add_one", kAddOne);
    ExpectFunction("shared_reverse", kReverse);
    ExpectPop();
    StatusOr<std::unique_ptr<Executable>> exe =
        Executable::Create(&api_, kPrimary, kDevice, Params());
    ASSERT_TRUE(exe.ok()) << exe.status();
    exe_ = std::move(exe).value();
    stack_.entries.push_back(kPrimary);  // the submissions' context is current
  }
  void TearDown() override {
    cb_.reset();
    ExpectUnload(/*in_context=*/false);
    exe_.reset();
    CommandMockTest::TearDown();
  }
  // A reusable graph command buffer: one dispatch of add_one over slot 0.
  void RecordOneDispatch() {
    CommandBufferParams params;
    params.mode = CommandBufferMode::kReusable;
    params.binding_capacity = 1;
    params.target = CommandTargetKind::kGraph;
    StatusOr<std::shared_ptr<CommandBuffer>> made = CommandBuffer::Create(&api_, params);
    ASSERT_TRUE(made.ok());
    cb_ = std::move(made).value();
    DispatchConfig config;
    config.block = {128, 1, 1};
    const BufferRef bindings[] = {BufferRef::Slot(0)};
    const std::uint32_t constants[] = {42};
    ASSERT_TRUE(cb_->Dispatch(*exe_, 0, config, bindings, constants).ok());
    ASSERT_TRUE(cb_->End().ok());
  }
  // cuGraphCreate -> `graph`, then one kernel node over `address`.
  void ExpectBuildOneKernel(CUgraph graph, CUdeviceptr address, CUresult add = CUDA_SUCCESS) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphCreate(_, 0u))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(*_1 = graph)
                          .RETURN(CUDA_SUCCESS));
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddKernelNode(_, graph, _, 0u, _))
                          .IN_SEQUENCE(seq_)
                          .WITH(_5->func == kAddOne && _5->blockDimX == 128)
                          .WITH(*static_cast<CUdeviceptr*>(_5->kernelParams[0]) == address)
                          .WITH(*static_cast<std::uint32_t*>(_5->kernelParams[1]) == 42)
                          .SIDE_EFFECT(*_1 = kNodes[0])
                          .RETURN(add));
  }
  void ExpectInstantiate(CUgraph graph, CUgraphExec exec, CUresult result = CUDA_SUCCESS) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphInstantiateWithFlags(_, graph, 0ull))
                          .IN_SEQUENCE(seq_)
                          .SIDE_EFFECT(if (result == CUDA_SUCCESS) *_1 = exec)
                          .RETURN(result));
  }
  void ExpectLaunch(CUgraphExec exec) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphLaunch(exec, kStream))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectSetKernel(CUgraphExec exec, CUdeviceptr address, CUresult result) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphExecKernelNodeSetParams(exec, kNodes[0], _))
                          .IN_SEQUENCE(seq_)
                          .WITH(*static_cast<CUdeviceptr*>(_3->kernelParams[0]) == address)
                          .RETURN(result));
  }
  void ExpectDestroy(CUgraphExec exec) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphExecDestroy(exec))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
  }
  void ExpectDestroy(CUgraph graph) {
    script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphDestroy(graph))
                          .IN_SEQUENCE(seq_)
                          .RETURN(CUDA_SUCCESS));
  }

  std::unique_ptr<Executable> exe_;
  std::shared_ptr<CommandBuffer> cb_;
};

TEST_F(GraphMockTest, BuildsNodesInRecordingOrderInstantiatesOnceAndUpdatesInPlace) {
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventCreate(_, CU_EVENT_DISABLE_TIMING))
                        .SIDE_EFFECT(*_1 = kEvent)
                        .RETURN(CUDA_SUCCESS));
  StatusOr<Event> event = Event::Create(&api_, kPrimary);  // its context is current already
  ASSERT_TRUE(event.ok()) << event.status();
  CommandBufferParams params;
  params.mode = CommandBufferMode::kReusable;
  params.binding_capacity = 2;
  params.target = CommandTargetKind::kGraph;
  StatusOr<std::shared_ptr<CommandBuffer>> made = CommandBuffer::Create(&api_, params);
  ASSERT_TRUE(made.ok());
  cb_ = *made;
  const std::uint16_t pattern = 0xBEEF;
  ASSERT_TRUE(cb_->Fill(BufferRef::Slot(0, 0, 256), &pattern, 2).ok());
  DispatchConfig config;
  config.block = {128, 1, 1};
  const BufferRef bindings[] = {BufferRef::Slot(1)};
  const std::uint32_t constants[] = {42};
  ASSERT_TRUE(cb_->Dispatch(*exe_, 0, config, bindings, constants).ok());
  ASSERT_TRUE(cb_->ExecutionBarrier().ok());
  ASSERT_TRUE(cb_->SignalEvent(*event).ok());
  ASSERT_TRUE(cb_->ResetEvent(*event).ok());  // records nothing
  const Event* events[] = {&*event};
  ASSERT_TRUE(cb_->WaitEvents(events).ok());
  ASSERT_TRUE(cb_->End().ok());

  // First submission: the graph, each node after the one before, then one instantiation.
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphCreate(_, 0u))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(*_1 = kGraph)
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddMemsetNode(_, kGraph, _, 0u, _, kPrimary))
                        .IN_SEQUENCE(seq_)
                        .WITH(_5->dst == 0x10000 && _5->elementSize == 2u && _5->width == 128u &&
                              _5->height == 1u && _5->value == 0xBEEFu)
                        .SIDE_EFFECT(*_1 = kNodes[0])
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddKernelNode(_, kGraph, _, 1u, _))
                        .IN_SEQUENCE(seq_)
                        .WITH(_3[0] == kNodes[0])
                        .WITH(*static_cast<CUdeviceptr*>(_5->kernelParams[0]) == 0x20000)
                        .SIDE_EFFECT(*_1 = kNodes[1])
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddEmptyNode(_, kGraph, _, 1u))
                        .IN_SEQUENCE(seq_)
                        .WITH(_3[0] == kNodes[1])
                        .SIDE_EFFECT(*_1 = kNodes[2])
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddEventRecordNode(_, kGraph, _, 1u, kEvent))
                        .IN_SEQUENCE(seq_)
                        .WITH(_3[0] == kNodes[2])
                        .SIDE_EFFECT(*_1 = kNodes[3])
                        .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphAddEventWaitNode(_, kGraph, _, 1u, kEvent))
                        .IN_SEQUENCE(seq_)
                        .WITH(_3[0] == kNodes[3])
                        .SIDE_EFFECT(*_1 = kNodes[4])
                        .RETURN(CUDA_SUCCESS));
  ExpectInstantiate(kGraph, kExec);
  ExpectLaunch(kExec);
  const ResolvedBinding first[] = {{0x10000, 4096}, {0x20000, 4096}};
  ASSERT_TRUE(cb_->Issue(kStream, first).ok());
  // The same addresses: launched as it is.
  ExpectLaunch(kExec);
  ASSERT_TRUE(cb_->Issue(kStream, first).ok());
  // New addresses: the two nodes that name slots are set in place.
  script_.push_back(
      NAMED_REQUIRE_CALL(mock_, cuGraphExecMemsetNodeSetParams(kExec, kNodes[0], _, kPrimary))
          .IN_SEQUENCE(seq_)
          .WITH(_3->dst == 0x70000 && _3->width == 128u && _3->value == 0xBEEFu)
          .RETURN(CUDA_SUCCESS));
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphExecKernelNodeSetParams(kExec, kNodes[1], _))
                        .IN_SEQUENCE(seq_)
                        .WITH(*static_cast<CUdeviceptr*>(_3->kernelParams[0]) == 0x90000)
                        .WITH(*static_cast<std::uint32_t*>(_3->kernelParams[1]) == 42)
                        .RETURN(CUDA_SUCCESS));
  ExpectLaunch(kExec);
  const ResolvedBinding second[] = {{0x70000, 4096}, {0x90000, 4096}};
  ASSERT_TRUE(cb_->Issue(kStream, second).ok());
  const CommandTargetStatistics stats = cb_->statistics().target;
  EXPECT_EQ(stats.instantiations, 1u);
  EXPECT_EQ(stats.launches, 3u);
  EXPECT_EQ(stats.reuses, 1u);
  EXPECT_EQ(stats.in_place_updates, 1u);
  EXPECT_EQ(stats.nodes_updated, 2u);
  EXPECT_EQ(stats.whole_graph_updates + stats.rebuilds, 0u);
  // Destruction: the executable graph, then the graph.
  ExpectDestroy(kExec);
  ExpectDestroy(kGraph);
  cb_.reset();
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuEventDestroy(kEvent)).RETURN(CUDA_SUCCESS));
  *event = Event();
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(GraphMockTest, RefusedSetterFallsBackToExecUpdateThenToARebuild) {
  ASSERT_NO_FATAL_FAILURE(RecordOneDispatch());
  ExpectBuildOneKernel(kGraph, 0x10000);
  ExpectInstantiate(kGraph, kExec);
  ExpectLaunch(kExec);
  const ResolvedBinding a[] = {{0x10000, 4096}};
  ASSERT_TRUE(cb_->Issue(kStream, a).ok());
  // The setter refuses: a fresh graph, cuGraphExecUpdate from it, the fresh graph destroyed.
  ExpectSetKernel(kExec, 0x20000, CUDA_ERROR_INVALID_VALUE);
  ExpectBuildOneKernel(kFreshGraph, 0x20000);
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphExecUpdate(kExec, kFreshGraph, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(_3->result = CU_GRAPH_EXEC_UPDATE_SUCCESS)
                        .RETURN(CUDA_SUCCESS));
  ExpectDestroy(kFreshGraph);
  ExpectLaunch(kExec);
  const ResolvedBinding b[] = {{0x20000, 4096}};
  ASSERT_TRUE(cb_->Issue(kStream, b).ok());
  EXPECT_EQ(cb_->statistics().target.whole_graph_updates, 1u);
  // Both refuse: the executable graph and the graph are replaced.
  ExpectSetKernel(kExec, 0x10000, CUDA_ERROR_INVALID_VALUE);
  ExpectBuildOneKernel(kFreshGraph, 0x10000);
  script_.push_back(NAMED_REQUIRE_CALL(mock_, cuGraphExecUpdate(kExec, kFreshGraph, _))
                        .IN_SEQUENCE(seq_)
                        .SIDE_EFFECT(_3->result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED)
                        .RETURN(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE));
  ExpectDestroy(kFreshGraph);
  ExpectDestroy(kExec);
  ExpectDestroy(kGraph);
  ExpectBuildOneKernel(kGraph2, 0x10000);
  ExpectInstantiate(kGraph2, kExec2);
  ExpectLaunch(kExec2);
  ASSERT_TRUE(cb_->Issue(kStream, a).ok());
  const CommandTargetStatistics stats = cb_->statistics().target;
  EXPECT_EQ(stats.instantiations, 2u);
  EXPECT_EQ(stats.rebuilds, 1u);
  EXPECT_EQ(stats.whole_graph_updates, 1u);
  EXPECT_EQ(stats.in_place_updates, 0u);
  EXPECT_EQ(stats.launches, 3u);
  ExpectDestroy(kExec2);
  ExpectDestroy(kGraph2);
  cb_.reset();
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(GraphMockTest, FailedInstantiateDestroysTheGraphAndTheNextSubmissionStartsOver) {
  ASSERT_NO_FATAL_FAILURE(RecordOneDispatch());
  ExpectBuildOneKernel(kGraph, 0x10000);
  ExpectInstantiate(kGraph, kExec, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectDestroy(kGraph);
  const ResolvedBinding a[] = {{0x10000, 4096}};
  const Status failed = cb_->Issue(kStream, a);
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(failed.message(), HasSubstr("cuGraphInstantiateWithFlags"));
  EXPECT_THAT(failed.message(), HasSubstr("instantiating its graph of 1 node(s)"));
  EXPECT_THAT(failed.message(), HasSubstr("(graph target)"));
  // A failed node: the graph is destroyed with what was added.
  ExpectBuildOneKernel(kGraph, 0x10000, CUDA_ERROR_INVALID_VALUE);
  ExpectDestroy(kGraph);
  const Status bad_node = cb_->Issue(kStream, a);
  EXPECT_THAT(bad_node.message(), HasSubstr("command 0 (dispatch)"));
  EXPECT_THAT(bad_node.message(), HasSubstr("cuGraphAddKernelNode"));
  // Then a clean build.
  ExpectBuildOneKernel(kGraph2, 0x10000);
  ExpectInstantiate(kGraph2, kExec2);
  ExpectLaunch(kExec2);
  ASSERT_TRUE(cb_->Issue(kStream, a).ok());
  EXPECT_EQ(cb_->statistics().target.instantiations, 1u);
  EXPECT_EQ(cb_->statistics().issues, 1u);
  ExpectDestroy(kExec2);
  ExpectDestroy(kGraph2);
  cb_.reset();
  EXPECT_TRUE(Dropped().empty());
}

TEST_F(GraphMockTest, AFailingSetterIsReturnedAndDropsTheExecutableGraph) {
  ASSERT_NO_FATAL_FAILURE(RecordOneDispatch());
  ExpectBuildOneKernel(kGraph, 0x10000);
  ExpectInstantiate(kGraph, kExec);
  ExpectLaunch(kExec);
  const ResolvedBinding a[] = {{0x10000, 4096}};
  ASSERT_TRUE(cb_->Issue(kStream, a).ok());
  // Not a refusal (out of memory): no fallback; the half-updated executable graph is dropped.
  ExpectSetKernel(kExec, 0x20000, CUDA_ERROR_OUT_OF_MEMORY);
  ExpectDestroy(kExec);
  ExpectDestroy(kGraph);
  const ResolvedBinding b[] = {{0x20000, 4096}};
  const Status failed = cb_->Issue(kStream, b);
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed;
  EXPECT_THAT(failed.message(), HasSubstr("cuGraphExecKernelNodeSetParams"));
  EXPECT_THAT(failed.message(), HasSubstr("updating the node of command 0 (dispatch)"));
  // The next submission rebuilds.
  ExpectBuildOneKernel(kGraph2, 0x20000);
  ExpectInstantiate(kGraph2, kExec2);
  ExpectLaunch(kExec2);
  ASSERT_TRUE(cb_->Issue(kStream, b).ok());
  ExpectDestroy(kExec2);
  ExpectDestroy(kGraph2);
  cb_.reset();
  EXPECT_TRUE(Dropped().empty());
}

}  // namespace
}  // namespace cuhal
