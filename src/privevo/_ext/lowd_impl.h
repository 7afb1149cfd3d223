/* One instruction set's fused low-dimensional nearest-candidate kernel.
 *
 * Included by lowd.c once per instruction set, with ISA_* macros defined:
 *   VF                 vector of W floats          VI     vector of W int32
 *   W                  lanes                        TARGET function attribute
 *   SUFFIX(name)       name ## _isa
 *   V_SET1(f), V_LOAD(p), V_STORE(p, v), V_FMA(a, b, c) = a*b + c,
 *   I_SET1, I_STORE, UPDATE(s, j, m1, m2, idx): the running minimum, index, second minimum;
 *   vector sets also MINS(s, m1, m2), BLOCK_INDEX(idx, m1, before, j) and the scalar S_FMA.
 *
 * Rows live in the lanes: W private rows at a time, transposed to xt[k][lane]
 * (float32, shifted by the public candidate mean). Each candidate j is
 * [−2(c_j − shift), ‖c_j − shift‖²] in float32; its score for row x is
 * ‖c‖² − 2x·c (‖x − c‖² − ‖x‖²), accumulated with FMAs in the order k = 0..D−1.
 * Per lane we keep the smallest score m1, its candidate idx (first on equal
 * scores), and the second smallest m2. Candidates go in blocks of 8 (8
 * independent FMA chains). Vector versions track m1 and m2 per candidate but
 * the index per block only (3 vector operations per candidate, not 5); the
 * winning candidate is found again in its block after the pass, with the same
 * float32 FMAs, so the labels are unchanged. The update is branch-free: skipping blocks whose
 * lane-wise minimum is not below m2 was measured slower (mispredicted
 * branches), and a branch-free loop takes the same time whatever the data.
 */

#define KBLOCK 8
#define BLOCK_INDEX_MIN 256 /* fewer candidates: the per-row search after the pass costs more */

static inline __attribute__((always_inline)) TARGET void
SUFFIX(kernel_body)(const int D, const float *xt, const float *cand, int64_t u,
                    float *m1_out, float *m2_out, int32_t *idx_out, const float *m2_init)
{
    VF xv[32];
#pragma GCC unroll 32
    for (int k = 0; k < D; k++) xv[k] = V_LOAD(xt + (size_t)k * W);
    VF m1 = V_SET1(INFINITY), m2 = m2_init ? V_LOAD(m2_init) : V_SET1(INFINITY);
    VI idx = I_SET1(0);
    const int64_t stride = D + 1;
    for (int64_t j = 0; j < u; j += KBLOCK) {
        const float *c = cand + j * stride;
        const int nb = u - j < KBLOCK ? (int)(u - j) : KBLOCK;
        VF s[KBLOCK];
        if (nb == KBLOCK) {
#pragma GCC unroll 8
            for (int t = 0; t < KBLOCK; t++) s[t] = V_SET1(c[t * stride + D]);
#pragma GCC unroll 32
            for (int k = 0; k < D; k++)
#pragma GCC unroll 8
                for (int t = 0; t < KBLOCK; t++)
                    s[t] = V_FMA(xv[k], V_SET1(c[t * stride + k]), s[t]);
        } else {
            for (int t = 0; t < nb; t++) {
                s[t] = V_SET1(c[t * stride + D]);
#pragma GCC unroll 32
                for (int k = 0; k < D; k++) s[t] = V_FMA(xv[k], V_SET1(c[t * stride + k]), s[t]);
            }
            for (int t = nb; t < KBLOCK; t++) s[t] = V_SET1(INFINITY);
        }
#ifdef BLOCK_INDEX
        if (u >= BLOCK_INDEX_MIN) {
            /* m1, m2 per candidate; the index only per block (the block where m1 last
             * fell); the caller finds the candidate in that block again (same arithmetic) */
            VF before = m1;
#pragma GCC unroll 8
            for (int t = 0; t < KBLOCK; t++) MINS(s[t], m1, m2);
            BLOCK_INDEX(idx, m1, before, (int32_t)j);
            continue;
        }
#endif
#pragma GCC unroll 8
        for (int t = 0; t < nb; t++) UPDATE(s[t], (int32_t)(j + t), m1, m2, idx);
    }
    VF m1v = m1, m2v = m2;
    VI idxv = idx;
    V_STORE(m1_out, m1v);
    V_STORE(m2_out, m2v);
    I_STORE(idx_out, idxv);
}

#define DEFINE_FIXED(DP)                                                                   \
    static TARGET void SUFFIX(kernel_##DP)(const float *xt, const float *cand, int64_t u,  \
                                           float *m1, float *m2, int32_t *idx,             \
                                           const float *m2_init)                           \
    {                                                                                      \
        SUFFIX(kernel_body)(DP, xt, cand, u, m1, m2, idx, m2_init);                        \
    }

DEFINE_FIXED(1)
DEFINE_FIXED(2)
DEFINE_FIXED(3)
DEFINE_FIXED(4)
DEFINE_FIXED(6)
DEFINE_FIXED(8)
DEFINE_FIXED(12)
DEFINE_FIXED(16)
DEFINE_FIXED(24)
DEFINE_FIXED(32)

#undef DEFINE_FIXED

/* Rows [0, n) of x (n × d, float64 or float32, C order): nearest candidate in
 * labels, and unsure[i] = 1 where the float32 gap between the best and the
 * second-best score is within the rounding bound (or the row is huge or not
 * finite): those rows are decided again, exactly, by the caller. */
static TARGET int64_t
SUFFIX(assign_rows)(const void *x, int x_is_double, int64_t n, int d, const double *shift,
                    const float *cand, int64_t u, int dp, double gamma2, double max_norm,
                    int64_t *labels, uint8_t *unsure, const float *m2_init, float *m1_out)
{
    void (*kern)(const float *, const float *, int64_t, float *, float *, int32_t *,
                 const float *);
    switch (dp) {
    case 1: kern = SUFFIX(kernel_1); break;
    case 2: kern = SUFFIX(kernel_2); break;
    case 3: kern = SUFFIX(kernel_3); break;
    case 4: kern = SUFFIX(kernel_4); break;
    case 6: kern = SUFFIX(kernel_6); break;
    case 8: kern = SUFFIX(kernel_8); break;
    case 12: kern = SUFFIX(kernel_12); break;
    case 16: kern = SUFFIX(kernel_16); break;
    case 24: kern = SUFFIX(kernel_24); break;
    case 32: kern = SUFFIX(kernel_32); break;
    default: return -1;
    }
    float xt[32 * W] __attribute__((aligned(64)));
    float m1[W] __attribute__((aligned(64))), m2[W] __attribute__((aligned(64)));
    int32_t idx[W] __attribute__((aligned(64)));
    float seed[W] __attribute__((aligned(64)));
    double norm2[W];
    const double *xd = (const double *)x;
    const float *xf = (const float *)x;
    const double mm = max_norm * max_norm;
    int64_t n_unsure = 0;
    for (int64_t i0 = 0; i0 < n; i0 += W) {
        int rows = (n - i0) < W ? (int)(n - i0) : W;
        for (int k = 0; k < dp * W; k++) xt[k] = 0.0f;
        for (int r = 0; r < W; r++) norm2[r] = 0.0;
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < d; k++) {
                size_t at = (size_t)(i0 + r) * d + k;
                double v = x_is_double ? xd[at] : (double)xf[at];
                float f = (float)(v - shift[k]);
                xt[k * W + r] = f;
                norm2[r] += (double)f * (double)f;
            }
        }
        if (m2_init) {
            for (int r = 0; r < W; r++) seed[r] = r < rows ? m2_init[i0 + r] : INFINITY;
        }
        kern(xt, cand, u, m1, m2, idx, m2_init ? seed : NULL);
        for (int r = 0; r < rows; r++) {
            double rn = sqrt(norm2[r]);
            double bound = gamma2 * (2.0 * rn * max_norm + mm + 1e-30);
            double gap = (double)m2[r] - (double)m1[r];
            int safe = (rn + max_norm) * (rn + max_norm) <= 1e37 && isfinite(m1[r]) && gap > bound;
#ifdef BLOCK_INDEX
            int64_t found = u >= BLOCK_INDEX_MIN ? -1 : idx[r];
            for (int64_t jj = idx[r]; jj < u && jj < (int64_t)idx[r] + KBLOCK && found < 0; jj++) {
                const float *c = cand + jj * (dp + 1);
                float sc = c[dp];
                for (int k = 0; k < dp; k++) sc = S_FMA(xt[k * W + r], c[k], sc);
                if (sc == m1[r]) found = jj;
            }
            safe = safe && found >= 0;
            labels[i0 + r] = found >= 0 ? found : 0;
#else
            labels[i0 + r] = idx[r];
#endif
            if (m1_out) m1_out[i0 + r] = m1[r];
            unsure[i0 + r] = !safe;
            n_unsure += !safe;
        }
    }
    return n_unsure;
}
