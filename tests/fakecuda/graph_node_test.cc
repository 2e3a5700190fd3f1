// Copyright 2026 The cuhal Authors.
// Conformance: the generic graph-node API (cuGraphAddNode, cuGraphNodeSetParams,
// cuGraphExecNodeSetParams) and conditional nodes (cuGraphConditionalHandleCreate, IF / IF-ELSE /
// WHILE / SWITCH bodies). The expectations are the real driver's answers to
// ci/gpu-probes/graphnode_probe.cc (docs/driver_facts.md, "Generic graph nodes and conditional
// nodes"); test names follow the probe's cases. Measured 2026-12-06 on an H100 80GB HBM3, driver
// 580.159.04 (ci/gpu-probes/results/2026-12-06-h100-graphnode.real.txt); where the probe could not
// reach an answer (the real driver crashed first) the expectation follows cuda.h 13.0 and says so.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "tests/fakecuda/graph_fixture.h"

namespace cuhal::testing {
namespace {

CUgraphNodeParams Params(CUgraphNodeType type) {
  CUgraphNodeParams p;
  std::memset(&p, 0, sizeof p);
  p.type = type;
  return p;
}

void CountCall(void* data) { ++*static_cast<int*>(data); }

class GraphNodeTest : public GraphTestBase {
 protected:
  void SetUp() override {
    GraphTestBase::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (api().cuGraphAddNode == nullptr || api().cuGraphConditionalHandleCreate == nullptr) {
      GTEST_SKIP() << "the driver has no generic graph-node entry points";
    }
    ASSERT_EQ(api().cuGraphCreate(&g_, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
    for (CUgraph g : extra_) {
      EXPECT_EQ(api().cuGraphDestroy(g), CUDA_SUCCESS);
    }
    if (g_ != nullptr) {
      EXPECT_EQ(api().cuGraphDestroy(g_), CUDA_SUCCESS);
    }
    GraphTestBase::TearDown();
  }
  CUgraph NewGraph() {
    CUgraph g = nullptr;
    EXPECT_EQ(api().cuGraphCreate(&g, 0), CUDA_SUCCESS);
    extra_.push_back(g);
    return g;
  }
  // add_u32(buf_ + off, v) as generic parameters; the arguments live in the fixture.
  CUgraphNodeParams Add(size_t off, unsigned v) {
    args_.push_back({buf_ + off, v, {}});
    Args& a = args_.back();
    a.ptrs[0] = &a.p;
    a.ptrs[1] = &a.v;
    CUgraphNodeParams p = Params(CU_GRAPH_NODE_TYPE_KERNEL);
    p.kernel.func = add_;
    p.kernel.gridDimX = p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = a.ptrs;
    return p;
  }
  CUgraphNodeParams Memset(size_t off, unsigned value) {
    CUgraphNodeParams p = Params(CU_GRAPH_NODE_TYPE_MEMSET);
    p.memset.dst = buf_ + off;
    p.memset.value = value;
    p.memset.elementSize = 4;
    p.memset.width = 1;
    p.memset.height = 1;
    p.memset.ctx = ctx();
    return p;
  }
  CUgraphNodeParams Cond(CUgraphConditionalHandle h, CUgraphConditionalNodeType type,
                         unsigned size) {
    CUgraphNodeParams p = Params(CU_GRAPH_NODE_TYPE_CONDITIONAL);
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    p.conditional.ctx = ctx();
    return p;
  }
  CUgraphNode AddNode(CUgraph g, CUgraphNodeParams* p, CUgraphNode dep = nullptr) {
    CUgraphNode n = nullptr;
    EXPECT_EQ(api().cuGraphAddNode(&n, g, dep ? &dep : nullptr, nullptr, dep ? 1 : 0, p),
              CUDA_SUCCESS);
    return n;
  }
  // Instantiates `g`, launches it `times` times and returns the value at buf_ after each.
  std::vector<unsigned> Run(CUgraph g, int times) {
    std::vector<unsigned> seen;
    CUgraphExec e = nullptr;
    EXPECT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
    if (e == nullptr) return seen;
    for (int i = 0; i < times; ++i) {
      EXPECT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
      EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
      seen.push_back(Read(buf_));
    }
    EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
    return seen;
  }
  // A graph with a conditional node of `type` and `size` bodies, body i adding 10^i to buf_,
  // after a kernel adding 1000000.
  CUgraph CondGraph(CUgraphConditionalNodeType type, unsigned size, unsigned def, unsigned flags) {
    CUgraph g = NewGraph();
    CUgraphConditionalHandle h = 0;
    EXPECT_EQ(api().cuGraphConditionalHandleCreate(&h, g, ctx(), def, flags), CUDA_SUCCESS);
    CUgraphNodeParams pre = Add(0, 1000000);
    CUgraphNode k = AddNode(g, &pre);
    CUgraphNodeParams c = Cond(h, type, size);
    AddNode(g, &c, k);
    EXPECT_NE(c.conditional.phGraph_out, nullptr);
    if (c.conditional.phGraph_out == nullptr) return g;
    unsigned v = 1;
    for (unsigned i = 0; i < size; ++i, v *= 10) {
      CUgraphNodeParams body = Add(0, v);
      AddNode(c.conditional.phGraph_out[i], &body);
    }
    return g;
  }

  struct Args {
    CUdeviceptr p;
    unsigned v;
    void* ptrs[2];
  };
  std::deque<Args> args_;  // kernel arguments: a deque, so that they never move
  CUgraph g_ = nullptr;
  std::vector<CUgraph> extra_;
};

// add:common, add:abi
TEST_P(GraphNodeTest, AddNodeChecksTheParameterBlock) {
  CUgraphNodeParams p = Params(CU_GRAPH_NODE_TYPE_EMPTY);
  CUgraphNode n = nullptr;
  ASSERT_EQ(api().cuGraphAddNode(&n, g_, nullptr, nullptr, 0, &p), CUDA_SUCCESS);
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL;
  EXPECT_EQ(api().cuGraphNodeGetType(n, &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_EMPTY);
  CUgraphNode x = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(nullptr, g_, nullptr, nullptr, 0, &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphAddNode(&x, nullptr, nullptr, nullptr, 0, &p), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode twice[2] = {n, n};
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, twice, nullptr, 2, &p), CUDA_ERROR_INVALID_VALUE);
  CUgraphNodeParams bad = Params(CU_GRAPH_NODE_TYPE_EMPTY);
  bad.reserved0[0] = 1;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
  bad = Params(CU_GRAPH_NODE_TYPE_EMPTY);
  bad.reserved2 = 1;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
  bad = Params(static_cast<CUgraphNodeType>(14));
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &bad), CUDA_ERROR_INVALID_VALUE);
  CUgraphEdgeData edge;
  std::memset(&edge, 0, sizeof edge);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, &n, &edge, 1, &p), CUDA_SUCCESS);
  EXPECT_EQ(NodeCount(g_), 2u);
}

// add:kernel, add:memset, add:memcpy, add:host, add:graph, add:mem
TEST_P(GraphNodeTest, AddNodeOfEachModelledTypeRuns) {
  CUgraphNodeParams k = Add(0, 5);
  CUgraphNode kn = AddNode(g_, &k);
  CUgraphNodeParams m = Memset(64, 77);
  CUgraphNode mn = AddNode(g_, &m, kn);
  CUgraphNodeParams c = Params(CU_GRAPH_NODE_TYPE_MEMCPY);
  c.memcpy.copyCtx = ctx();
  c.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.memcpy.copyParams.srcDevice = buf_ + 64;
  c.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.memcpy.copyParams.dstDevice = buf_ + 128;
  c.memcpy.copyParams.WidthInBytes = 4;
  c.memcpy.copyParams.Height = 1;
  c.memcpy.copyParams.Depth = 1;
  CUgraphNode cn = AddNode(g_, &c, mn);
  int calls = 0;
  CUgraphNodeParams h = Params(CU_GRAPH_NODE_TYPE_HOST);
  h.host.fn = CountCall;
  h.host.userData = &calls;
  CUgraphNode hn = AddNode(g_, &h, cn);
  CUgraph child = NewGraph();
  CUgraphNodeParams cm = Memset(192, 9);
  AddNode(child, &cm);
  CUgraphNodeParams cg = Params(CU_GRAPH_NODE_TYPE_GRAPH);
  cg.graph.graph = child;
  CUgraphNode gn = AddNode(g_, &cg, hn);
  CUgraphNodeParams al = Params(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  al.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  al.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  al.alloc.bytesize = 1 << 20;
  CUgraphNode an = AddNode(g_, &al, gn);
  EXPECT_NE(al.alloc.dptr, 0u);
  CUgraphNodeParams fr = Params(CU_GRAPH_NODE_TYPE_MEM_FREE);
  fr.free.dptr = al.alloc.dptr;
  CUgraphNode fn = AddNode(g_, &fr, an);
  for (auto [node, want] : {std::pair{kn, CU_GRAPH_NODE_TYPE_KERNEL},
                            {mn, CU_GRAPH_NODE_TYPE_MEMSET}, {cn, CU_GRAPH_NODE_TYPE_MEMCPY},
                            {hn, CU_GRAPH_NODE_TYPE_HOST}, {gn, CU_GRAPH_NODE_TYPE_GRAPH},
                            {an, CU_GRAPH_NODE_TYPE_MEM_ALLOC}, {fn, CU_GRAPH_NODE_TYPE_MEM_FREE}}) {
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    EXPECT_EQ(api().cuGraphNodeGetType(node, &t), CUDA_SUCCESS);
    EXPECT_EQ(t, want);
  }
  EXPECT_EQ(Run(g_, 2), (std::vector<unsigned>{5, 10}));
  EXPECT_EQ(Read(buf_ + 128), 77u);
  EXPECT_EQ(Read(buf_ + 192), 9u);
  EXPECT_EQ(calls, 2);
}

// setparams:graph, setparams:exec
TEST_P(GraphNodeTest, SetParamsOnTheGraphAndOnTheExecutableGraph) {
  CUgraphNodeParams k = Add(0, 1);
  CUgraphNode kn = AddNode(g_, &k);
  CUgraphNodeParams m = Memset(64, 10);
  CUgraphNode mn = AddNode(g_, &m, kn);
  int first = 0, second = 0;
  CUgraphNodeParams h = Params(CU_GRAPH_NODE_TYPE_HOST);
  h.host.fn = CountCall;
  h.host.userData = &first;
  CUgraphNode hn = AddNode(g_, &h, mn);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  CUgraphNodeParams k7 = Add(0, 7);
  CUgraphNodeParams m11 = Memset(64, 11);
  h.host.userData = &second;
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, kn, &k7), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, mn, &m11), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, hn, &h), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, kn, &m11), CUDA_ERROR_INVALID_VALUE);  // wrong type
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, kn, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 7u);
  EXPECT_EQ(Read(buf_ + 64), 11u);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  // The graph itself kept its parameters; cuGraphNodeSetParams changes them.
  CUgraphNodeParams k3 = Add(0, 3);
  EXPECT_EQ(api().cuGraphNodeSetParams(kn, &k3), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphNodeSetParams(kn, &m11), CUDA_ERROR_INVALID_VALUE);
  CUgraphNodeParams nofn = Params(CU_GRAPH_NODE_TYPE_HOST);
  EXPECT_EQ(api().cuGraphNodeSetParams(hn, &nofn), CUDA_ERROR_INVALID_VALUE);
  // Measured 2026-12-06, H100 driver 580.159.04 (setparams:graph): a child graph node's graph
  // cannot be changed in the graph (a null graph: CUDA_ERROR_INVALID_VALUE first).
  CUgraph child = NewGraph();
  CUgraphNodeParams cm = Memset(192, 20);
  AddNode(child, &cm);
  CUgraphNodeParams cg = Params(CU_GRAPH_NODE_TYPE_GRAPH);
  cg.graph.graph = child;
  CUgraphNode gn = AddNode(g_, &cg, hn);
  CUgraph other = NewGraph();
  CUgraphNodeParams om = Memset(192, 21);
  AddNode(other, &om);
  cg.graph.graph = other;
  EXPECT_EQ(api().cuGraphNodeSetParams(gn, &cg), CUDA_ERROR_NOT_SUPPORTED);
  cg.graph.graph = nullptr;
  EXPECT_EQ(api().cuGraphNodeSetParams(gn, &cg), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
  EXPECT_EQ(Run(g_, 1), (std::vector<unsigned>{3}));
  EXPECT_EQ(Read(buf_ + 64), 10u);
  EXPECT_EQ(Read(buf_ + 192), 20u) << "the child graph kept";
  EXPECT_EQ(first, 1);
}

// NVIDIA cuda-python's test_graph_poly (cuda_bindings/tests/test_cuda.py): a memset node and a
// device-to-pageable-host memcpy node added with cuGraphAddNode (no context given), launched; then
// the memcpy node, found through cuGraphGetNodes, is read back with cuGraphMemcpyNodeGetParams,
// changed with cuGraphNodeSetParams and read back again; the memset node is changed on the
// executable graph. The real driver answers CUDA_SUCCESS to each call (the test passes on it);
// the fake answered CUDA_ERROR_NOT_SUPPORTED to cuGraphMemcpyNodeGetParams (2026-12-06).
TEST_P(GraphNodeTest, CudaPythonGraphPolyReadsAndSetsAMemcpyNodeAddedGenerically) {
  using GetMemcpy = CUresult (*)(CUgraphNode, CUDA_MEMCPY3D*);
  using GetMemset = CUresult (*)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*);
  void* get_memcpy = nullptr;
  void* get_memset = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  ASSERT_NE(api().cuGetProcAddress, nullptr);
  ASSERT_EQ(api().cuGetProcAddress("cuGraphMemcpyNodeGetParams", &get_memcpy, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  ASSERT_EQ(api().cuGetProcAddress("cuGraphMemsetNodeGetParams", &get_memset, CUDA_VERSION,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &status),
            CUDA_SUCCESS);
  ASSERT_NE(get_memcpy, nullptr);
  ASSERT_NE(get_memset, nullptr);
  const size_t size = 1024;
  CUdeviceptr dev[2] = {0, 0};
  std::vector<unsigned char> host[2] = {std::vector<unsigned char>(size, 2),
                                        std::vector<unsigned char>(size, 2)};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(api().cuMemAlloc(&dev[i], size), CUDA_SUCCESS);
    ASSERT_EQ(api().cuMemcpyHtoD(dev[i], host[i].data(), size), CUDA_SUCCESS);
  }
  CUgraphNodeParams ms = Params(CU_GRAPH_NODE_TYPE_MEMSET);
  ms.memset.elementSize = 1;
  ms.memset.width = size;
  ms.memset.height = 1;
  ms.memset.dst = dev[0];
  ms.memset.value = 1;
  CUgraphNode added[2] = {nullptr, nullptr};
  ASSERT_EQ(api().cuGraphAddNode(&added[0], g_, nullptr, nullptr, 0, &ms), CUDA_SUCCESS);
  CUgraphNodeParams mc = Params(CU_GRAPH_NODE_TYPE_MEMCPY);
  mc.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  mc.memcpy.copyParams.srcDevice = dev[1];
  mc.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_HOST;
  mc.memcpy.copyParams.dstHost = host[1].data();
  mc.memcpy.copyParams.WidthInBytes = size;
  mc.memcpy.copyParams.Height = 1;
  mc.memcpy.copyParams.Depth = 1;
  ASSERT_EQ(api().cuGraphAddNode(&added[1], g_, nullptr, nullptr, 0, &mc), CUDA_SUCCESS);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(api().cuMemcpyDtoH(host[i].data(), dev[i], size), CUDA_SUCCESS);
  }
  EXPECT_EQ(host[0], std::vector<unsigned char>(size, 1));
  EXPECT_EQ(host[1], std::vector<unsigned char>(size, 2));

  CUgraphNode nodes[2] = {nullptr, nullptr};
  size_t n = 2;
  ASSERT_EQ(api().cuGraphGetNodes(g_, nodes, &n), CUDA_SUCCESS);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(nodes[1], added[1]);
  CUDA_MEMCPY3D copy;
  std::memset(&copy, 0, sizeof copy);
  ASSERT_EQ(reinterpret_cast<GetMemcpy>(get_memcpy)(nodes[1], &copy), CUDA_SUCCESS);
  EXPECT_EQ(copy.srcDevice, dev[1]);
  EXPECT_EQ(copy.dstHost, host[1].data());
  EXPECT_EQ(copy.WidthInBytes, size);
  mc.memcpy.copyParams.srcDevice = dev[0];
  ASSERT_EQ(api().cuGraphNodeSetParams(nodes[1], &mc), CUDA_SUCCESS);
  ASSERT_EQ(reinterpret_cast<GetMemcpy>(get_memcpy)(nodes[1], &copy), CUDA_SUCCESS);
  EXPECT_EQ(copy.srcDevice, dev[0]);
  // Not the Python test's: the memset getter, and each getter on a node of the other type.
  CUDA_MEMSET_NODE_PARAMS set;
  std::memset(&set, 0, sizeof set);
  ASSERT_EQ(reinterpret_cast<GetMemset>(get_memset)(nodes[0], &set), CUDA_SUCCESS);
  EXPECT_EQ(set.dst, dev[0]);
  EXPECT_EQ(set.value, 1u);
  EXPECT_EQ(set.width, size);

  ms.memset.value = 11;
  ASSERT_EQ(api().cuGraphExecNodeSetParams(e, nodes[0], &ms), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(host[0].data(), dev[0], size), CUDA_SUCCESS);
  EXPECT_EQ(host[0], std::vector<unsigned char>(size, 11));
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
  for (CUdeviceptr d : dev) EXPECT_EQ(api().cuMemFree(d), CUDA_SUCCESS);
}

// setparams:exec: measured 2026-12-06, H100 driver 580.159.04: cuGraphExecNodeSetParams of a child
// graph node takes a child of the same shape (the next launch runs it); another shape (an empty
// child) is CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and changes nothing; a null graph is
// CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphNodeTest, ExecSetParamsOfAChildGraphNodeTakesTheSameShape) {
  CUgraph child = NewGraph();
  CUgraphNodeParams m20 = Memset(192, 20);
  AddNode(child, &m20);
  CUgraphNodeParams k = Add(0, 1);
  CUgraphNode kn = AddNode(g_, &k);
  CUgraphNodeParams cg = Params(CU_GRAPH_NODE_TYPE_GRAPH);
  cg.graph.graph = child;
  CUgraphNode gn = AddNode(g_, &cg, kn);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  CUgraph child2 = NewGraph();
  CUgraphNodeParams m21 = Memset(192, 21);
  AddNode(child2, &m21);
  cg.graph.graph = child2;
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, gn, &cg), CUDA_SUCCESS);
  cg.graph.graph = NewGraph();
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, gn, &cg), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  cg.graph.graph = nullptr;
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, gn, &cg), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
  ASSERT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_ + 192), 21u);
  EXPECT_EQ(Read(buf_), 1u);
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// cond:graph_ops: measured 2026-12-06, H100 driver 580.159.04: once its only conditional node is
// destroyed, the graph (its handle now unused) fails to instantiate (CUDA_ERROR_INVALID_VALUE).
TEST_P(GraphNodeTest, GraphWithAnUnusedHandleFailsToInstantiate) {
  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraphNodeParams k = Add(0, 100);
  CUgraphNode kn = AddNode(g_, &k);
  CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  CUgraphNode cn = AddNode(g_, &c, kn);
  ASSERT_EQ(api().cuGraphDestroyNode(cn), CUDA_SUCCESS);
  CUgraphExec e = nullptr;
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_ERROR_INVALID_VALUE);
}

// noctx: measured 2026-12-06, H100 driver 580.159.04: with no context current, cuGraphAddNode
// accepts a memset node and a memcpy node whose ctx is NULL.
TEST_P(GraphNodeTest, MemsetAndMemcpyNodesWithNullContextNeedNoCurrentContext) {
  ASSERT_EQ(api().cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  CUgraphNodeParams ms = Memset(0, 1);
  ms.memset.ctx = nullptr;
  CUgraphNode n = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(&n, g_, nullptr, nullptr, 0, &ms), CUDA_SUCCESS);
  CUgraphNodeParams mc = Params(CU_GRAPH_NODE_TYPE_MEMCPY);
  mc.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  mc.memcpy.copyParams.srcDevice = buf_;
  mc.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  mc.memcpy.copyParams.dstDevice = buf_ + 64;
  mc.memcpy.copyParams.WidthInBytes = 4;
  mc.memcpy.copyParams.Height = 1;
  mc.memcpy.copyParams.Depth = 1;
  EXPECT_EQ(api().cuGraphAddNode(&n, g_, nullptr, nullptr, 0, &mc), CUDA_SUCCESS);
  ASSERT_EQ(api().cuCtxSetCurrent(ctx()), CUDA_SUCCESS);
  EXPECT_EQ(NodeCount(g_), 2u);
}

// add:unmodelled: measured 2026-12-06, H100 driver 580.159.04: an external-semaphore signal node
// with no semaphore, or with one null semaphore, is added.
TEST_P(GraphNodeTest, ExternalSemaphoreSignalNodesAreAddedUnchecked) {
  CUgraphNodeParams sig = Params(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
  CUgraphNode x = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &sig), CUDA_SUCCESS);
  CUexternalSemaphore none[1] = {nullptr};
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp[1];
  std::memset(sp, 0, sizeof sp);
  sig.extSemSignal.extSemArray = none;
  sig.extSemSignal.paramsArray = sp;
  sig.extSemSignal.numExtSems = 1;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &sig), CUDA_SUCCESS);
  CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
  EXPECT_EQ(api().cuGraphNodeGetType(x, &t), CUDA_SUCCESS);
  EXPECT_EQ(t, CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
  EXPECT_EQ(NodeCount(g_), 2u);
}

// add:mem: measured 2026-12-06, H100 driver 580.159.04: a memory alloc node asking for exportable
// handles is CUDA_ERROR_NOT_SUPPORTED.
TEST_P(GraphNodeTest, AllocNodeWithExportableHandlesIsNotSupported) {
  CUgraphNodeParams al = Params(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  al.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  al.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  al.alloc.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  al.alloc.bytesize = 4096;
  CUgraphNode x = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &al), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NodeCount(g_), 0u);
}

// handle
TEST_P(GraphNodeTest, ConditionalHandleCreateChecksItsArguments) {
  CUgraphConditionalHandle a = 0, b = 0;
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&a, g_, ctx(), 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&b, g_, ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  EXPECT_NE(a, b);
  // Measured 2026-12-06, H100 driver 580.159.04: a null context is refused even with one
  // current, and the first handle of another graph has the same value as this graph's first.
  CUgraphConditionalHandle c = 0;
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&c, g_, nullptr, 5, 0),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(c, 0u);
  CUgraphConditionalHandle first_of_other = 0;
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&first_of_other, NewGraph(), ctx(), 0, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(first_of_other, a);
  CUgraphConditionalHandle x = 0x5a5a;
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(nullptr, g_, ctx(), 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&x, nullptr, ctx(), 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&x, g_, ctx(), 0, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(x, 0x5a5au);
}

// cond:add
TEST_P(GraphNodeTest, ConditionalNodeGetsDriverOwnedBodies) {
  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 0, 0), CUDA_SUCCESS);
  struct Case {
    CUgraphConditionalNodeType type;
    unsigned size;
    CUresult want;
  } cases[] = {{CU_GRAPH_COND_TYPE_IF, 1, CUDA_SUCCESS},
               {CU_GRAPH_COND_TYPE_IF, 2, CUDA_SUCCESS},
               {CU_GRAPH_COND_TYPE_IF, 0, CUDA_ERROR_INVALID_VALUE},
               {CU_GRAPH_COND_TYPE_IF, 3, CUDA_ERROR_INVALID_VALUE},
               {CU_GRAPH_COND_TYPE_WHILE, 1, CUDA_SUCCESS},
               {CU_GRAPH_COND_TYPE_WHILE, 2, CUDA_ERROR_INVALID_VALUE},
               {CU_GRAPH_COND_TYPE_SWITCH, 0, CUDA_ERROR_INVALID_VALUE},
               {CU_GRAPH_COND_TYPE_SWITCH, 5, CUDA_SUCCESS}};
  for (const Case& c : cases) {
    CUgraphNodeParams p = Cond(h, c.type, c.size);
    CUgraphNode n = nullptr;
    EXPECT_EQ(api().cuGraphAddNode(&n, g_, nullptr, nullptr, 0, &p), c.want)
        << "type " << c.type << " size " << c.size;
    if (c.want != CUDA_SUCCESS) continue;
    ASSERT_NE(p.conditional.phGraph_out, nullptr);
    for (unsigned i = 0; i < c.size; ++i) {
      EXPECT_NE(p.conditional.phGraph_out[i], nullptr);
      EXPECT_NE(p.conditional.phGraph_out[i], g_);
      EXPECT_EQ(NodeCount(p.conditional.phGraph_out[i]), 0u);
    }
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    EXPECT_EQ(api().cuGraphNodeGetType(n, &t), CUDA_SUCCESS);
    EXPECT_EQ(t, CU_GRAPH_NODE_TYPE_CONDITIONAL);
  }
  CUgraphNode x = nullptr;
  CUgraphNodeParams zero = Cond(0, CU_GRAPH_COND_TYPE_IF, 1);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &zero), CUDA_ERROR_INVALID_VALUE);
  CUgraphNodeParams garbage = Cond(0x123456789ull, CU_GRAPH_COND_TYPE_IF, 1);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &garbage), CUDA_ERROR_INVALID_VALUE);
  // Measured 2026-12-06, H100 driver 580.159.04 (cond:add): another graph's first handle is
  // accepted (its value is this graph's first handle's); a null context is refused even with
  // one current.
  CUgraph other = NewGraph();
  CUgraphConditionalHandle foreign = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&foreign, other, ctx(), 0, 0), CUDA_SUCCESS);
  CUgraphNodeParams p = Cond(foreign, CU_GRAPH_COND_TYPE_IF, 1);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &p), CUDA_SUCCESS);
  CUgraphNodeParams noctx = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  noctx.conditional.ctx = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &noctx),
            CUDA_ERROR_INVALID_CONTEXT);
}

// cond:run:if, cond:run:switch, cond:run:while
TEST_P(GraphNodeTest, DefaultValueSelectsTheBodyAtEachLaunch) {
  const unsigned kDefault = CU_GRAPH_COND_ASSIGN_DEFAULT;
  struct Case {
    CUgraphConditionalNodeType type;
    unsigned size, def;
    unsigned want;  // added per launch besides the 1000000 before the node
  } cases[] = {{CU_GRAPH_COND_TYPE_IF, 1, 1, 1},      {CU_GRAPH_COND_TYPE_IF, 1, 0, 0},
               {CU_GRAPH_COND_TYPE_IF, 1, 7, 1},      {CU_GRAPH_COND_TYPE_IF, 2, 1, 1},
               {CU_GRAPH_COND_TYPE_IF, 2, 0, 10},     {CU_GRAPH_COND_TYPE_SWITCH, 3, 0, 1},
               {CU_GRAPH_COND_TYPE_SWITCH, 3, 2, 100}, {CU_GRAPH_COND_TYPE_SWITCH, 3, 3, 0},
               {CU_GRAPH_COND_TYPE_WHILE, 1, 0, 0}};
  for (const Case& c : cases) {
    ASSERT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
    CUgraph g = CondGraph(c.type, c.size, c.def, kDefault);
    const unsigned once = 1000000 + c.want;
    EXPECT_EQ(Run(g, 2), (std::vector<unsigned>{once, 2 * once}))
        << "type " << c.type << " size " << c.size << " default " << c.def;
  }
}

// cond:body:*. Measured 2026-12-06, H100 driver 580.159.04: a body accepts a node of any type
// when it is added (but a conditional node reusing the enclosing node's handle); a body holding a
// host, event or memory node, a child graph with such a node, or a copy from pageable host memory
// makes the parent graph's instantiation fail with CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphNodeTest, ConditionalBodyIsCheckedWhenTheParentIsInstantiated) {
  int calls = 0;
  CUgraphNodeParams host = Params(CU_GRAPH_NODE_TYPE_HOST);
  host.host.fn = CountCall;
  host.host.userData = &calls;
  CUevent ev = nullptr;
  ASSERT_EQ(api().cuEventCreate(&ev, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  CUgraphNodeParams rec = Params(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  rec.eventRecord.event = ev;
  CUgraph child = NewGraph();
  AddNode(child, &host);
  CUgraphNodeParams cg = Params(CU_GRAPH_NODE_TYPE_GRAPH);
  cg.graph.graph = child;
  unsigned pageable = 4321;
  CUgraphNodeParams mc = Params(CU_GRAPH_NODE_TYPE_MEMCPY);
  mc.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_HOST;
  mc.memcpy.copyParams.srcHost = &pageable;
  mc.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  mc.memcpy.copyParams.dstDevice = buf_;
  mc.memcpy.copyParams.WidthInBytes = 4;
  mc.memcpy.copyParams.Height = 1;
  mc.memcpy.copyParams.Depth = 1;
  for (CUgraphNodeParams* bad : {&host, &rec, &cg, &mc}) {
    CUgraph g = NewGraph();
    CUgraphConditionalHandle h = 0;
    ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g, ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
              CUDA_SUCCESS);
    CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
    AddNode(g, &c);
    ASSERT_NE(c.conditional.phGraph_out, nullptr);
    CUgraphNode x = nullptr;
    EXPECT_EQ(api().cuGraphAddNode(&x, c.conditional.phGraph_out[0], nullptr, nullptr, 0, bad),
              CUDA_SUCCESS)
        << "node type " << bad->type;
    CUgraphExec e = nullptr;
    EXPECT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_ERROR_INVALID_VALUE)
        << "node type " << bad->type;
  }
  EXPECT_EQ(api().cuEventDestroy(ev), CUDA_SUCCESS);
  EXPECT_EQ(calls, 0);

  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  AddNode(g_, &c);
  ASSERT_NE(c.conditional.phGraph_out, nullptr);
  CUgraph body = c.conditional.phGraph_out[0];
  CUgraphNode x = nullptr;
  CUgraphNodeParams same = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  EXPECT_EQ(api().cuGraphAddNode(&x, body, nullptr, nullptr, 0, &same), CUDA_ERROR_INVALID_VALUE)
      << "the enclosing node's handle";
  CUgraphNodeParams k = Add(0, 3);
  CUgraphNode kn = AddNode(body, &k);
  CUgraphNodeParams m = Memset(64, 4);
  AddNode(body, &m, kn);
  EXPECT_EQ(Run(g_, 1), (std::vector<unsigned>{3}));
  EXPECT_EQ(Read(buf_ + 64), 4u);
}

// cond:graph_ops
TEST_P(GraphNodeTest, GraphWithConditionalNodeCannotBeClonedNorBeAChild) {
  CUgraph g = CondGraph(CU_GRAPH_COND_TYPE_IF, 1, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
  CUgraph clone = nullptr;
  EXPECT_EQ(api().cuGraphClone(&clone, g), CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNode x = nullptr;
  // Measured 2026-12-06, H100 driver 580.159.04 (cond:graph_ops, cond:destroy_body): such a
  // graph, or a body, as a child graph, and a body cloned or instantiated alone, are
  // CUDA_ERROR_NOT_SUPPORTED; destroying a body is CUDA_ERROR_INVALID_VALUE.
  EXPECT_EQ(api().cuGraphAddChildGraphNode(&x, g_, nullptr, 0, g), CUDA_ERROR_NOT_SUPPORTED);
  CUgraphNode cond = nullptr;
  size_t n = 0;
  ASSERT_EQ(api().cuGraphGetNodes(g, nullptr, &n), CUDA_SUCCESS);
  std::vector<CUgraphNode> nodes(n);
  ASSERT_EQ(api().cuGraphGetNodes(g, nodes.data(), &n), CUDA_SUCCESS);
  for (CUgraphNode node : nodes) {
    CUgraphNodeType t = CU_GRAPH_NODE_TYPE_EMPTY;
    ASSERT_EQ(api().cuGraphNodeGetType(node, &t), CUDA_SUCCESS);
    if (t == CU_GRAPH_NODE_TYPE_CONDITIONAL) cond = node;
  }
  ASSERT_NE(cond, nullptr);
  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 0, 0), CUDA_SUCCESS);
  CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  AddNode(g_, &c);
  ASSERT_NE(c.conditional.phGraph_out, nullptr);
  CUgraph body = c.conditional.phGraph_out[0];
  EXPECT_EQ(api().cuGraphClone(&clone, body), CUDA_ERROR_NOT_SUPPORTED);
  CUgraph parent = NewGraph();
  EXPECT_EQ(api().cuGraphAddChildGraphNode(&x, parent, nullptr, 0, body),
            CUDA_ERROR_NOT_SUPPORTED);
  CUgraphExec alone = nullptr;
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&alone, body, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuGraphDestroy(body), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(NodeCount(body), 0u) << "the body lives on";
  CUgraphExec e1 = nullptr, e2 = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e1, g, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&e2, g, 0), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuGraphExecDestroy(e1), CUDA_SUCCESS);
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e2, g, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphExecDestroy(e2), CUDA_SUCCESS);
}

// cond:graph_ops: measured 2026-12-06, H100 driver 580.159.04: a kernel node inside a body takes
// cuGraphExecNodeSetParams (the next launch runs it); cuGraphExecUpdate from a graph with the same
// conditional structure succeeds (result SUCCESS) and brings the new handle's default and the new
// body parameters; a body with another node count is TOPOLOGY_CHANGED with no error node; a
// SWITCH in place of the IF is ERROR_NOT_SUPPORTED with the error node; failed updates change
// nothing.
TEST_P(GraphNodeTest, BodyNodesTakeExecSetParamsAndConditionalGraphsUpdate) {
  auto make = [&](CUgraph g, unsigned def, CUgraphConditionalNodeType type,
                  std::vector<std::vector<unsigned>> bodies, CUgraphNode* first_body_node) {
    CUgraphConditionalHandle h = 0;
    EXPECT_EQ(api().cuGraphConditionalHandleCreate(&h, g, ctx(), def, CU_GRAPH_COND_ASSIGN_DEFAULT),
              CUDA_SUCCESS);
    CUgraphNodeParams pre = Add(0, 100);
    CUgraphNode k = AddNode(g, &pre);
    CUgraphNodeParams c = Cond(h, type, static_cast<unsigned>(bodies.size()));
    AddNode(g, &c, k);
    if (c.conditional.phGraph_out == nullptr) return;
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      for (unsigned v : bodies[b]) {
        CUgraphNodeParams kp = Add(0, v);
        CUgraphNode n = AddNode(c.conditional.phGraph_out[b], &kp);
        if (b == 0 && first_body_node != nullptr && *first_body_node == nullptr) {
          *first_body_node = n;
        }
      }
    }
  };
  auto launch = [&](CUgraphExec e) {
    EXPECT_EQ(api().cuMemsetD8(buf_, 0, 4096), CUDA_SUCCESS);
    EXPECT_EQ(api().cuGraphLaunch(e, s1_), CUDA_SUCCESS);
    EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
    return Read(buf_);
  };
  CUgraphNode b0 = nullptr;
  make(g_, 1, CU_GRAPH_COND_TYPE_IF, {{1}, {10}}, &b0);
  ASSERT_NE(b0, nullptr);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  EXPECT_EQ(launch(e), 101u);
  CUgraphNodeParams k2 = Add(0, 2);
  EXPECT_EQ(api().cuGraphExecNodeSetParams(e, b0, &k2), CUDA_SUCCESS);
  EXPECT_EQ(launch(e), 102u);

  CUgraph same = NewGraph();
  make(same, 0, CU_GRAPH_COND_TYPE_IF, {{5}, {50}}, nullptr);
  CUgraphExecUpdateResultInfo info;
  std::memset(&info, 0, sizeof info);
  EXPECT_EQ(api().cuGraphExecUpdate(e, same, &info), CUDA_SUCCESS);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  EXPECT_EQ(info.errorNode, nullptr);
  EXPECT_EQ(launch(e), 150u) << "the new default (0) runs the new else body";

  CUgraph bigger = NewGraph();
  make(bigger, 1, CU_GRAPH_COND_TYPE_IF, {{5, 5}, {50}}, nullptr);
  std::memset(&info, 0, sizeof info);
  EXPECT_EQ(api().cuGraphExecUpdate(e, bigger, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  EXPECT_EQ(info.errorNode, nullptr);
  CUgraph sw = NewGraph();
  make(sw, 1, CU_GRAPH_COND_TYPE_SWITCH, {{5}, {50}}, nullptr);
  std::memset(&info, 0, sizeof info);
  EXPECT_EQ(api().cuGraphExecUpdate(e, sw, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED);
  EXPECT_NE(info.errorNode, nullptr);
  EXPECT_EQ(launch(e), 150u) << "failed updates change nothing";
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

CUHAL_INSTANTIATE_BACKEND_TEST(GraphNodeTest);

// Modelling choices of the fake (not answerable on the real driver).
class GraphNodeFakeTest : public GraphNodeTest {};

// A WHILE node whose value is nonzero at launch loops forever on the GPU (nothing but a kernel
// calling cudaGraphSetConditional could end it, and the fake cannot run such a kernel): the fake
// refuses the launch instead of hanging, with nothing queued.
TEST_P(GraphNodeFakeTest, WhileWithNonzeroValueIsRefusedAtLaunch) {
  CUgraph g = CondGraph(CU_GRAPH_COND_TYPE_WHILE, 1, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphLaunch(e, s1_), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 0u);  // not even the kernel before the node ran
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// Body graphs belong to their node: destroying the node or its graph destroys them, and they
// are not reported as leaked graphs.
TEST_P(GraphNodeFakeTest, BodiesDieWithTheirNode) {
  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 0, 0), CUDA_SUCCESS);
  CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_SWITCH, 2);
  CUgraphNode n = AddNode(g_, &c);
  ASSERT_NE(c.conditional.phGraph_out, nullptr);
  CUgraph body = c.conditional.phGraph_out[1];
  EXPECT_EQ(NodeCount(body), 0u);
  EXPECT_EQ(api().cuGraphDestroyNode(n), CUDA_SUCCESS);
  size_t count = 0;
  EXPECT_EQ(api().cuGraphGetNodes(body, nullptr, &count), CUDA_ERROR_INVALID_VALUE);
  CUgraphNode x = nullptr;
  CUgraphNodeParams again = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &again), CUDA_SUCCESS);
}

// External semaphores are not modelled: a graph holding an external-semaphore node is refused
// at launch (CUDA_ERROR_NOT_SUPPORTED) with nothing queued; a null semaphore array for a nonzero
// count (the real driver crashed on it) is CUDA_ERROR_INVALID_VALUE.
TEST_P(GraphNodeFakeTest, ExternalSemaphoreNodesAreNotRun) {
  CUgraphNodeParams sig = Params(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
  sig.extSemSignal.numExtSems = 1;
  CUgraphNode x = nullptr;
  EXPECT_EQ(api().cuGraphAddNode(&x, g_, nullptr, nullptr, 0, &sig), CUDA_ERROR_INVALID_VALUE);
  CUgraphNodeParams wait = Params(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
  CUgraphNodeParams k = Add(0, 5);
  CUgraphNode kn = AddNode(g_, &k);
  AddNode(g_, &wait, kn);
  CUgraphExec e = nullptr;
  ASSERT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_SUCCESS);
  EXPECT_EQ(api().cuGraphLaunch(e, s1_), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuStreamSynchronize(s1_), CUDA_SUCCESS);
  EXPECT_EQ(Read(buf_), 0u) << "nothing queued";
  EXPECT_EQ(api().cuGraphExecDestroy(e), CUDA_SUCCESS);
}

// The fake refuses every graph whose hierarchy has a handle no conditional node uses (cuda.h:
// such handles "may cause graph instantiation to fail"; measured only after destroying the node,
// GraphNodeTest.GraphWithAnUnusedHandleFailsToInstantiate); using the handle makes it instantiable.
TEST_P(GraphNodeFakeTest, UnusedHandlesFailInstantiationUntilUsed) {
  CUgraphConditionalHandle h = 0;
  ASSERT_EQ(api().cuGraphConditionalHandleCreate(&h, g_, ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraphNodeParams k = Add(0, 100);
  CUgraphNode kn = AddNode(g_, &k);
  CUgraphExec e = nullptr;
  EXPECT_EQ(api().cuGraphInstantiateWithFlags(&e, g_, 0), CUDA_ERROR_INVALID_VALUE);
  CUgraphNodeParams c = Cond(h, CU_GRAPH_COND_TYPE_IF, 1);
  AddNode(g_, &c, kn);
  EXPECT_EQ(Run(g_, 1), (std::vector<unsigned>{100}));
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(GraphNodeFakeTest);

// noinit: measured 2026-12-06, H100 driver 580.159.04: before cuInit the generic graph-node calls
// answer CUDA_ERROR_INVALID_VALUE for their null handles (not CUDA_ERROR_NOT_INITIALIZED). Fake
// only: the real driver cannot be un-initialized in this process.
class GraphNodePreInitTest : public BackendTest {
 protected:
  BackendOptions Options() const override {
    BackendOptions options;
    options.init = false;
    return options;
  }
};

TEST_P(GraphNodePreInitTest, GenericCallsBeforeCuInitAreInvalidValue) {
  CUgraphConditionalHandle h = 0;
  EXPECT_EQ(api().cuGraphConditionalHandleCreate(&h, nullptr, nullptr, 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  CUgraphNode n = nullptr;
  CUgraphNodeParams p = Params(CU_GRAPH_NODE_TYPE_EMPTY);
  EXPECT_EQ(api().cuGraphAddNode(&n, nullptr, nullptr, nullptr, 0, &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphNodeSetParams(nullptr, &p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuGraphExecNodeSetParams(nullptr, nullptr, &p), CUDA_ERROR_INVALID_VALUE);
  CUgraph g = nullptr;
  EXPECT_EQ(api().cuGraphCreate(&g, 0), CUDA_ERROR_NOT_INITIALIZED) << "graphs need cuInit";
}

CUHAL_INSTANTIATE_FAKE_ONLY_TEST(GraphNodePreInitTest);

}  // namespace
}  // namespace cuhal::testing
