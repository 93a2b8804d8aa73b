"""The block-sparse attention forward kernel of topoml.triton (imported by
topoml.triton on first launch only: it imports triton)."""
import triton
import triton.language as tl


@triton.jit
def block_sparse_attention_fwd(Q, K, V, O, counts, indices, sm_scale, q_len, kv_len, heads,
                               sqb, sqh, sqm, skb, skh, skn, svb, svh, svn, sob, soh, som,
                               n_qblocks, n_kblocks,
                               BLOCK: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr,
                               CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    """One program per (query block, batch * heads): online softmax over
    the key blocks the schedule lists for this query block (counts/indices:
    AttentionSchedule's tables), in float32, exp2 with the scale folded in;
    PRECISION is tl.dot's input precision ("ieee" for float32 inputs unless
    TF32 is asked for, "tf32" otherwise: it does not apply to 16-bit)."""
    qb = tl.program_id(0)
    bh = tl.program_id(1)
    bi = bh // heads
    hi = bh % heads
    offs_m = qb * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    q = tl.load(Q + bi.to(tl.int64) * sqb + hi.to(tl.int64) * sqh + offs_m[:, None].to(tl.int64) * sqm
                + offs_d[None, :], mask=(offs_m[:, None] < q_len) & dmask[None, :], other=0.0)
    m_i = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, BLOCK_D], dtype=tl.float32)
    row = bh.to(tl.int64) * n_qblocks + qb
    count = tl.load(counts + row)
    kbase = K + bi.to(tl.int64) * skb + hi.to(tl.int64) * skh
    vbase = V + bi.to(tl.int64) * svb + hi.to(tl.int64) * svh
    qk_scale = sm_scale * 1.4426950408889634  # exp2
    for j in range(0, count):
        kb = tl.load(indices + row * n_kblocks + j)
        cols = kb * BLOCK + offs_n
        cmask = cols < kv_len
        k = tl.load(kbase + cols[:, None].to(tl.int64) * skn + offs_d[None, :],
                    mask=cmask[:, None] & dmask[None, :], other=0.0)
        s = tl.dot(q, tl.trans(k), out_dtype=tl.float32, input_precision=PRECISION) * qk_scale
        keep = cmask[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        # Rows with nothing kept so far stay at -inf: subtract 0 there.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(vbase + cols[:, None].to(tl.int64) * svn + offs_d[None, :],
                    mask=cmask[:, None] & dmask[None, :], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, out_dtype=tl.float32,
                                         input_precision=PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    out = acc / l_safe[:, None]
    tl.store(O + bi.to(tl.int64) * sob + hi.to(tl.int64) * soh + offs_m[:, None].to(tl.int64) * som
             + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=(offs_m[:, None] < q_len) & dmask[None, :])
