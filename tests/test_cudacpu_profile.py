"""atensi.cudacpu.profile(): counts from the addresses the lanes of each warp used.

A planted kernel reads shared memory with a stride of 8 floats (lanes 0, 4, 8, ...
share a bank: 8 distinct words per bank) and global memory with a stride of 32
floats (every lane its own 32-byte sector); its twin reads both with stride 1.
"""

import numpy as np
import pytest

from atensi.cudacpu import RawModule, profile

CODE = r"""
extern "C" __global__ void strided(const float* g, float* out, int stride_s, int stride_g) {
  __shared__ float s[32 * 33];
  const int t = threadIdx.x;
  for (int i = t; i < 32 * 33; i += blockDim.x) s[i] = 1.0f;
  __syncthreads();
  const float a = s[(t * stride_s) % (32 * 33)];
  const float b = g[t * stride_g];
  out[blockIdx.x * blockDim.x + t] = a * b + __expf(a);
}

extern "C" __global__ void wide(const float4* g, float* out) {
  __shared__ float4 s[64];
  const int t = threadIdx.x;
  s[t] = g[t];
  __syncthreads();
  const float4 v = s[(t * 2) % 64];
  out[t] = v.x + v.y;
  if (t % 3 == 0) out[t] += __expf(v.z * 1e-3f);  // a third of the lanes: a divergent branch
}
"""
WAVES_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_LD = "smsp__inst_executed_op_shared_ld.sum"
CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SECTORS_LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQUESTS_LD = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"


@pytest.fixture(scope="module")
def module():
    return RawModule(CODE, path="tests/tanam_profil.cu")


def _profile(module, stride_s, stride_g, blocks=2):
    g = np.arange(32 * 32 * 2, dtype=np.float32)
    out = np.zeros(64 * blocks, np.float32)
    with profile() as prof:
        module.get_function("strided")((blocks,), (64,), (g, out, np.int32(stride_s), np.int32(stride_g)))
    s = np.ones(32 * 33, np.float32)
    t = np.arange(64 * blocks) % 64
    expected = s[(t * stride_s) % (32 * 33)] * g[t * stride_g] + np.exp(1.0)
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6)  # the run itself is unchanged
    return prof


def test_stride_8_shared_reads_are_8_wavefronts_and_stride_32_loads_32_sectors(module):
    prof = _profile(module, 8, 32)
    m = prof.kernels["strided"]
    requests = 2 * 2  # 2 warps x 2 blocks, one read each
    assert m[SHARED_LD] == requests
    assert m[WAVES_LD] / m[SHARED_LD] == 8
    assert m[CONFLICTS_LD] == 7 * requests
    assert m[REQUESTS_LD] == requests
    assert m[SECTORS_LD] / m[REQUESTS_LD] == 32
    # Per site: the read of s[...] is line 8 of the planted file.
    assert prof.per_request("strided", 8, "shared_ld") == 8
    assert {s.file for s in prof.sites} == {"tests/tanam_profil.cu"}
    assert prof.launches == {"strided": 1}


def test_conflict_free_and_coalesced_twin_is_1_wavefront_and_4_sectors(module):
    m = _profile(module, 1, 1).kernels["strided"]
    assert m[WAVES_LD] / m[SHARED_LD] == 1
    assert m[CONFLICTS_LD] == 0
    assert m[SECTORS_LD] / m[REQUESTS_LD] == 4


def test_instructions_barriers_and_branches_are_counted(module):
    m = _profile(module, 1, 1, blocks=1).kernels["strided"]
    assert m["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] == 64  # a * b + exp: one FMA per thread
    assert m["smsp__sass_thread_inst_executed_op_mufu_pred_on.sum"] == 64  # __expf
    assert m["smsp__inst_executed_op_barrier.sum"] == 2  # one __syncthreads, two warps
    # 32 * 33 = 1056 stores over 64 threads: warp 0 makes 17 passes, warp 1 16.
    assert m["smsp__inst_executed_op_shared_st.sum"] == 33


def test_launches_outside_the_context_are_not_counted(module):
    prof = _profile(module, 1, 1)
    module.get_function("strided")((1,), (64,), (np.zeros(2048, np.float32), np.zeros(64, np.float32),
                                                 np.int32(1), np.int32(1)))
    assert prof.launches == {"strided": 1}


def test_16_byte_accesses_are_four_phases_of_8_lanes(module):
    g = np.arange(64 * 4, dtype=np.float32)
    out = np.zeros(64, np.float32)
    with profile() as prof:
        module.get_function("wide")((1,), (64,), (g, out))
    v = g.reshape(64, 4)[(np.arange(64) * 2) % 64]
    expected = v[:, 0] + v[:, 1] + np.where(np.arange(64) % 3 == 0, np.exp(v[:, 2] * np.float32(1e-3)), 0)
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6)
    m = prof.kernels["wide"]
    # Stores s[t]: 8 lanes x 16 B = 128 B per phase, no conflict: 4 wavefronts per request.
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] / m["smsp__inst_executed_op_shared_st.sum"] == 4
    # Reads s[2t]: 8 lanes span 256 B, two words per bank in each phase: 8 wavefronts.
    assert m[WAVES_LD] / m[SHARED_LD] == 8
    assert m[SECTORS_LD] / m[REQUESTS_LD] == 16  # 512 contiguous bytes per warp
    # The branch: lanes of one warp disagree, so fewer than 32 lanes are active per visit.
    assert m["smsp__sass_average_branch_targets_threads_uniform.pct"] < 100
    assert m["smsp__thread_inst_executed_per_inst_executed.ratio"] < 32
    assert m["smsp__sass_thread_inst_executed_op_mufu_pred_on.sum"] == len(range(0, 64, 3))


def test_traced_warp_gives_each_lanes_address_and_the_same_counts(module):
    g = np.arange(32 * 32 * 2, dtype=np.float32)
    out = np.zeros(128, np.float32)
    with profile(warp=((1, 0, 0), 1)) as prof:
        module.get_function("strided")((2,), (64,), (g, out, np.int32(8), np.int32(32)))
    reads = [r for r in prof.requests if r.line == 8]
    assert len(reads) == 1 and reads[0].space == "shared" and not reads[0].store
    r = reads[0]
    # Lane l of warp 1 is thread 32 + l: word (32 + l) * 8 mod 1056, bank 0, 8, 16 or 24.
    base = r.addresses[0] - ((32 * 8) % 1056) * 4
    assert [(a - base) // 4 for a in r.addresses] == [((32 + lane) * 8) % 1056 for lane in range(32)]
    assert set(r.banks) == {(base // 4 + w) % 32 for w in (0, 8, 16, 24)}
    assert (r.wavefronts, r.ideal) == (8, 1)
    loads = [q for q in prof.requests if q.space == "global" and not q.store and q.line == 9]
    assert len(loads) == 1 and loads[0].sector_count == 32 and loads[0].lanes == 32
    # The traced warp's requests add up to what the counters saw for one warp of one block.
    m = prof.kernels["strided"]
    assert sum(q.wavefronts for q in prof.requests if q.space == "shared" and not q.store) * 4 == m[WAVES_LD]


def test_warp_argument_is_checked_before_any_launch():
    with pytest.raises(ValueError, match="Argumen 'warp'"):
        with profile(warp=(0,)):
            pass
    with pytest.raises(ValueError, match="'warp'"):
        with profile(warp=((0, 0, 0), 40)):
            pass
