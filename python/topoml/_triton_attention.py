"""The block-sparse attention forward kernel of topoml.triton (imported by
topoml.triton on first launch only: it imports triton)."""
import triton
import triton.language as tl


@triton.jit
def block_sparse_attention_fwd(Q, K, V, O, LSE, counts, indices, sm_scale, q_len, kv_len, heads,
                               sqb, sqh, sqm, skb, skh, skn, svb, svh, svn, sob, soh, som,
                               n_qblocks, n_kblocks,
                               BLOCK: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr,
                               CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
    """One program per (query block, batch * heads): online softmax over
    the key blocks the schedule lists for this query block (counts/indices:
    AttentionSchedule's tables), in float32, exp2 with the scale folded in;
    LSE (float32, (batch * heads, q_len)) receives each row's log-sum-exp
    in base 2. PRECISION is tl.dot's input precision ("ieee" for float32 inputs unless
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
    # The log-sum-exp in base 2 of the scaled scores, for the backward pass
    # (+inf where a row kept nothing: its probabilities are then 0).
    lse = tl.where(l_i == 0.0, float("inf"), m_i + tl.log2(l_safe))
    tl.store(LSE + bh.to(tl.int64) * q_len + offs_m, lse, mask=offs_m < q_len)
    tl.store(O + bi.to(tl.int64) * sob + hi.to(tl.int64) * soh + offs_m[:, None].to(tl.int64) * som
             + offs_d[None, :], out.to(O.dtype.element_ty),
             mask=(offs_m[:, None] < q_len) & dmask[None, :])


@triton.jit
def _scores(q, k, offs_m, cols, q_len, kv_len, qk_scale, lse, CAUSAL: tl.constexpr,
            PRECISION: tl.constexpr):
    """The probabilities of a (query block, key block) pair, recomputed from
    the forward pass's log-sum-exp; 0 where masked."""
    s = tl.dot(q, tl.trans(k), out_dtype=tl.float32, input_precision=PRECISION) * qk_scale
    keep = (cols[None, :] < kv_len) & (offs_m[:, None] < q_len)
    if CAUSAL:
        keep = keep & (offs_m[:, None] >= cols[None, :])
    return tl.where(keep, tl.exp2(s - lse[:, None]), 0.0)


@triton.jit
def block_sparse_attention_bwd_dq(Q, K, V, DO, DQ, LSE, DELTA, counts, indices, sm_scale, q_len,
                                  kv_len, heads, sqb, sqh, sqm, skb, skh, skn, n_qblocks,
                                  n_kblocks, BLOCK: tl.constexpr, D: tl.constexpr,
                                  BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr,
                                  PRECISION: tl.constexpr):
    """dQ of one query block over the key blocks the schedule lists for it.
    Q, DO, DQ share the strides sq*, K and V sk*; DELTA is rowsum(dO * O)."""
    qb = tl.program_id(0)
    bh = tl.program_id(1)
    bi = bh // heads
    hi = bh % heads
    offs_m = qb * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    rmask = (offs_m[:, None] < q_len) & dmask[None, :]
    qoff = bi.to(tl.int64) * sqb + hi.to(tl.int64) * sqh + offs_m[:, None].to(tl.int64) * sqm \
        + offs_d[None, :]
    q = tl.load(Q + qoff, mask=rmask, other=0.0)
    do = tl.load(DO + qoff, mask=rmask, other=0.0)
    lse = tl.load(LSE + bh.to(tl.int64) * q_len + offs_m, mask=offs_m < q_len, other=0.0)
    delta = tl.load(DELTA + bh.to(tl.int64) * q_len + offs_m, mask=offs_m < q_len, other=0.0)
    kbase = bi.to(tl.int64) * skb + hi.to(tl.int64) * skh
    qk_scale = sm_scale * 1.4426950408889634
    dq = tl.zeros([BLOCK, BLOCK_D], dtype=tl.float32)
    row = bh.to(tl.int64) * n_qblocks + qb
    for j in range(0, tl.load(counts + row)):
        cols = tl.load(indices + row * n_kblocks + j) * BLOCK + offs_n
        cm = (cols[:, None] < kv_len) & dmask[None, :]
        koff = kbase + cols[:, None].to(tl.int64) * skn + offs_d[None, :]
        k = tl.load(K + koff, mask=cm, other=0.0)
        v = tl.load(V + koff, mask=cm, other=0.0)
        p = _scores(q, k, offs_m, cols, q_len, kv_len, qk_scale, lse, CAUSAL, PRECISION)
        dp = tl.dot(do, tl.trans(v), out_dtype=tl.float32, input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, out_dtype=tl.float32, input_precision=PRECISION)
    tl.store(DQ + qoff, (dq * sm_scale).to(DQ.dtype.element_ty), mask=rmask)


@triton.jit
def block_sparse_attention_bwd_dkdv(Q, K, V, DO, DK, DV, LSE, DELTA, tcounts, tindices, sm_scale,
                                    q_len, kv_len, heads, sqb, sqh, sqm, skb, skh, skn,
                                    n_qblocks, n_kblocks, BLOCK: tl.constexpr, D: tl.constexpr,
                                    BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr,
                                    PRECISION: tl.constexpr):
    """dK and dV of one key block over the query blocks that attend to it
    (tcounts/tindices: the schedule's tables transposed)."""
    kb = tl.program_id(0)
    bh = tl.program_id(1)
    bi = bh // heads
    hi = bh % heads
    cols = kb * BLOCK + tl.arange(0, BLOCK)
    offs_m0 = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    cm = (cols[:, None] < kv_len) & dmask[None, :]
    koff = bi.to(tl.int64) * skb + hi.to(tl.int64) * skh + cols[:, None].to(tl.int64) * skn \
        + offs_d[None, :]
    k = tl.load(K + koff, mask=cm, other=0.0)
    v = tl.load(V + koff, mask=cm, other=0.0)
    qbase = bi.to(tl.int64) * sqb + hi.to(tl.int64) * sqh
    qk_scale = sm_scale * 1.4426950408889634
    dk = tl.zeros([BLOCK, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK, BLOCK_D], dtype=tl.float32)
    row = bh.to(tl.int64) * n_kblocks + kb
    for i in range(0, tl.load(tcounts + row)):
        offs_m = tl.load(tindices + row * n_qblocks + i) * BLOCK + offs_m0
        rm = offs_m < q_len
        qoff = qbase + offs_m[:, None].to(tl.int64) * sqm + offs_d[None, :]
        q = tl.load(Q + qoff, mask=rm[:, None] & dmask[None, :], other=0.0)
        do = tl.load(DO + qoff, mask=rm[:, None] & dmask[None, :], other=0.0)
        lse = tl.load(LSE + bh.to(tl.int64) * q_len + offs_m, mask=rm, other=0.0)
        delta = tl.load(DELTA + bh.to(tl.int64) * q_len + offs_m, mask=rm, other=0.0)
        p = _scores(q, k, offs_m, cols, q_len, kv_len, qk_scale, lse, CAUSAL, PRECISION)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, out_dtype=tl.float32, input_precision=PRECISION)
        dp = tl.dot(do, tl.trans(v), out_dtype=tl.float32, input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, out_dtype=tl.float32, input_precision=PRECISION)
    tl.store(DK + koff, (dk * sm_scale).to(DK.dtype.element_ty), mask=cm)
    tl.store(DV + koff, dv.to(DV.dtype.element_ty), mask=cm)
