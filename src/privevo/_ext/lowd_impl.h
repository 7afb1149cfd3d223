/* One instruction set's fused low-dimensional nearest-candidate kernel.
 *
 * Included by lowd.c once per instruction set, with ISA_* macros defined:
 *   VF                 vector of W floats          VI     vector of W int32
 *   W                  lanes                        TARGET function attribute
 *   SUFFIX(name)       name ## _isa
 *   V_SET1(f), V_LOAD(p), V_STORE(p, v), V_FMA(a, b, c) = a*b + c,
 *   I_SET1, I_STORE, UPDATE(s, j, m1, m2, idx): the running minimum, index, second minimum;
 *   vector sets also MINS(s, m1, m2), BLOCK_INDEX(idx, m1, before, j) and the scalar S_FMA;
 * and PADDED_DIMS(X), the padded dimensions with a kernel each. It undefines the ISA macros
 * (and its own) at its end, ready for the next instruction set.
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

/* s[0..KBLOCK) = the scores of the nb <= KBLOCK candidates at c (rows of D + 1 floats) for
 * the W rows in xv: c[D] + sum_k xv[k] c[k], FMAs in the order k = 0..D-1, +inf past nb; the
 * one score arithmetic of the flat scan (kernel_body) and the tree's leaves (tree_body).
 * A macro, not an inline function: GCC compiles it to the same instructions as the loops
 * written out; an inline function compiled to other code (the partial block less unrolled). */
#define SCORE_BLOCK(s, xv, c, nb, D)                                                       \
    do {                                                                                   \
        const int64_t stride_ = (D) + 1;                                                   \
        if ((nb) == KBLOCK) {                                                              \
            _Pragma("GCC unroll 8")                                                        \
            for (int q = 0; q < KBLOCK; q++) (s)[q] = V_SET1((c)[q * stride_ + (D)]);      \
            _Pragma("GCC unroll 32")                                                       \
            for (int k = 0; k < (D); k++)                                                  \
                _Pragma("GCC unroll 8")                                                    \
                for (int q = 0; q < KBLOCK; q++)                                           \
                    (s)[q] = V_FMA((xv)[k], V_SET1((c)[q * stride_ + k]), (s)[q]);         \
        } else {                                                                           \
            for (int q = 0; q < (nb); q++) {                                               \
                (s)[q] = V_SET1((c)[q * stride_ + (D)]);                                   \
                _Pragma("GCC unroll 32")                                                   \
                for (int k = 0; k < (D); k++)                                              \
                    (s)[q] = V_FMA((xv)[k], V_SET1((c)[q * stride_ + k]), (s)[q]);         \
            }                                                                              \
            for (int q = (nb); q < KBLOCK; q++) (s)[q] = V_SET1(INFINITY);                 \
        }                                                                                  \
    } while (0)

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
        SCORE_BLOCK(s, xv, c, nb, D);
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

PADDED_DIMS(DEFINE_FIXED)

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
#define CASE_FIXED(DP)                                                                     \
    case DP: kern = SUFFIX(kernel_##DP); break;
    switch (dp) {
        PADDED_DIMS(CASE_FIXED)
    default: return -1;
    }
#undef CASE_FIXED
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

/* ------------------------------------------------------------------ tree search
 * Over 80 lines: one branch-and-bound walk with an explicit stack, kept whole so that it
 * is inlined once per instruction set (a call per subtree would cost more than the scan).
 * The same score arithmetic as kernel_body, candidates visited leaf by leaf in the
 * tree's order (cand in tree order, idx a tree position). A subtree is skipped when the
 * lower bound of |x - c|^2 between the group's box of rows and its box exceeds every
 * row's threshold off[r] + m2[r](1 + 8u): then each skipped candidate's float32 score
 * exceeds the row's current m2 (off[r] holds |x|^2 and the rounding bound, see
 * assign_tree_rows), so it could change neither m1, m2 nor the winner. Children are
 * visited nearest first so m2 falls early. */
static inline __attribute__((always_inline)) TARGET void
SUFFIX(tree_body)(const int D, const float *xt, const tree_view *t, int rows, const double *off,
                  const float *glo, const float *ghi, float *m1_out, float *m2_out,
                  int32_t *idx_out)
{
    VF xv[32];
#pragma GCC unroll 32
    for (int k = 0; k < D; k++) xv[k] = V_LOAD(xt + (size_t)k * W);
    VF m1 = V_SET1(INFINITY), m2 = V_SET1(INFINITY);
    VI idx = I_SET1(0);
    const int64_t stride = D + 1;
    int32_t stack[160];
    double stlb[160];
    int sp = 0;
    float m2a[W] __attribute__((aligned(64)));
    double T = INFINITY;
    stack[0] = 0, stlb[0] = 0.0, sp = 1;
    while (sp > 0) {
        sp--;
        const int32_t nd = stack[sp];
        if (stlb[sp] > T) continue;
        const int32_t *nn = t->node + (int64_t)nd * 6;
        if (nn[2] >= 0) {
            double ll = tree_box_lb(t, nn[2], glo, ghi), lr = tree_box_lb(t, nn[3], glo, ghi);
            int32_t near = ll <= lr ? nn[2] : nn[3], far = ll <= lr ? nn[3] : nn[2];
            double lnear = ll <= lr ? ll : lr, lfar = ll <= lr ? lr : ll;
            if (!(lfar > T)) stack[sp] = far, stlb[sp] = lfar, sp++;
            if (!(lnear > T)) stack[sp] = near, stlb[sp] = lnear, sp++;
            continue;
        }
        const int64_t end = nn[1];
        for (int64_t j = nn[0]; j < end; j += KBLOCK) {
            const float *c = t->cand + j * stride;
            const int nb = end - j < KBLOCK ? (int)(end - j) : KBLOCK;
            VF s[KBLOCK];
            SCORE_BLOCK(s, xv, c, nb, D);
#ifdef BLOCK_INDEX
            VF before = m1;
#pragma GCC unroll 8
            for (int q = 0; q < KBLOCK; q++) MINS(s[q], m1, m2);
            BLOCK_INDEX(idx, m1, before, (int32_t)j);
#else
            for (int q = 0; q < nb; q++) UPDATE(s[q], (int32_t)(j + q), m1, m2, idx);
#endif
        }
        V_STORE(m2a, m2);
        double top = -INFINITY;
        for (int r = 0; r < rows; r++) {
            double v = (double)m2a[r];
            double th = v + off[r] + 8.0 * U32 * fabs(v);
            if (!(th <= 1e300)) {
                top = INFINITY;
                break;
            }
            top = th > top ? th : top;
        }
        T = top;
    }
    V_STORE(m1_out, m1);
    V_STORE(m2_out, m2);
    I_STORE(idx_out, idx);
#ifdef BLOCK_INDEX
    /* idx holds the block m1 came from: the first candidate of that block with the same
     * float32 score (same FMAs in the same order), -1 if none; a later equal score is a
     * tie, and then m2 == m1 */
    for (int r = 0; r < rows; r++) {
        const int64_t j0 = idx_out[r];
        int32_t found = -1;
        if (j0 >= 0 && j0 + KBLOCK <= t->u) {
            unsigned hit = 0;
#pragma GCC unroll 8
            for (int q = 0; q < KBLOCK; q++) {
                const float *c = t->cand + (j0 + q) * stride;
                float sc = c[D];
#pragma GCC unroll 32
                for (int k = 0; k < D; k++) sc = S_FMA(xt[k * W + r], c[k], sc);
                hit |= (unsigned)(sc == m1_out[r]) << q;
            }
            found = hit ? (int32_t)(j0 + __builtin_ctz(hit)) : -1;
        } else {
            for (int64_t jj = j0; jj >= 0 && jj < t->u && jj < j0 + KBLOCK && found < 0; jj++) {
                const float *c = t->cand + jj * stride;
                float sc = c[D];
                for (int k = 0; k < D; k++) sc = S_FMA(xt[k * W + r], c[k], sc);
                if (sc == m1_out[r]) found = (int32_t)jj;
            }
        }
        idx_out[r] = found;
    }
#endif
}

#define DEFINE_TREE(DP)                                                                    \
    static TARGET void SUFFIX(tree_##DP)(const float *xt, const tree_view *t, int rows,    \
                                         const double *off, const float *glo,              \
                                         const float *ghi, float *m1, float *m2,           \
                                         int32_t *idx)                                     \
    {                                                                                      \
        SUFFIX(tree_body)(DP, xt, t, rows, off, glo, ghi, m1, m2, idx);                    \
    }

PADDED_DIMS(DEFINE_TREE)

#undef DEFINE_TREE

/* assign_rows with the candidate tree: rows [0, n) of x are taken in Morton order
 * (tree_row_order; any order would be correct, this one makes the W rows of a group
 * close to each other), then each group searches the tree. Same outputs.
 * off[r] = |x|^2 + gamma2 (2|x| max|c| + max|c|^2) + 8u |x|^2 + 1e-30, with |x|^2 the
 * float32 row's squared norm: a candidate's float32 score s satisfies
 * s >= |x - c|^2 - |x|^2 - (d + 4)u(max|c|^2 + 2|x| max|c|) (kernel_body's bound, with c
 * the float32 candidate -cand/2), and gamma2 is twice that factor, so a box bound
 * lb > off + m2(1 + 8u) gives s > m2 with room for the double rounding of the test. */
static TARGET int64_t
SUFFIX(assign_tree_rows)(const void *x, int x_is_double, int64_t n, int d, const double *shift,
                         const tree_view *t, double gamma2, double max_norm, int64_t *labels,
                         uint8_t *unsure, float *m1_out)
{
    const int dp = (int)t->dp;
    void (*kern)(const float *, const tree_view *, int, const double *, const float *,
                 const float *, float *, float *, int32_t *);
#define CASE_TREE(DP)                                                                      \
    case DP: kern = SUFFIX(tree_##DP); break;
    switch (dp) {
        PADDED_DIMS(CASE_TREE)
    default: return -1;
    }
#undef CASE_TREE
    const int64_t u = t->u;
    float *xsorted = NULL;
    int64_t *order = tree_row_order(x, x_is_double, n, d, shift, &xsorted);
    if (!order) return -2;

    float xt[32 * W] __attribute__((aligned(64)));
    float m1[W] __attribute__((aligned(64))), m2[W] __attribute__((aligned(64)));
    int32_t idx[W] __attribute__((aligned(64)));
    double norm2[W], off[W];
    float glo[32], ghi[32];
    const double mm = max_norm * max_norm;
    int64_t n_unsure = 0;
    for (int64_t i0 = 0; i0 < n; i0 += W) {
        int rows = (n - i0) < W ? (int)(n - i0) : W;
        for (int k = 0; k < dp * W; k++) xt[k] = 0.0f;
        for (int k = 0; k < dp; k++) glo[k] = INFINITY, ghi[k] = -INFINITY;
        for (int r = 0; r < W; r++) norm2[r] = 0.0;
        for (int r = 0; r < rows; r++) {
            const float *xr = xsorted + (size_t)(i0 + r) * d;
            for (int k = 0; k < d; k++) {
                float f = xr[k];
                xt[k * W + r] = f;
                norm2[r] += (double)f * (double)f;
                glo[k] = f < glo[k] ? f : glo[k];
                ghi[k] = f > ghi[k] ? f : ghi[k];
            }
            double rn = sqrt(norm2[r]);
            off[r] = norm2[r] * (1.0 + 8.0 * U32) + gamma2 * (2.0 * rn * max_norm + mm + 1e-30) + 1e-30;
        }
        for (int k = 0; k < d; k++)
            if (!(glo[k] <= ghi[k])) glo[k] = -INFINITY, ghi[k] = INFINITY; /* no finite row */
        kern(xt, t, rows, off, glo, ghi, m1, m2, idx);
        for (int r = 0; r < rows; r++) {
            const int64_t row = order[i0 + r];
            double rn = sqrt(norm2[r]);
            double bound = gamma2 * (2.0 * rn * max_norm + mm + 1e-30);
            double gap = (double)m2[r] - (double)m1[r];
            int safe = (rn + max_norm) * (rn + max_norm) <= 1e37 && isfinite(m1[r]) && gap > bound;
            const int64_t found = idx[r] >= 0 && idx[r] < u ? idx[r] : -1;
            safe = safe && found >= 0;
            labels[row] = found >= 0 ? t->perm[found] : 0;
            if (m1_out) m1_out[row] = m1[r];
            unsure[row] = !safe;
            n_unsure += !safe;
        }
    }
    free(order);
    free(xsorted);
    return n_unsure;
}

/* Ready for the next instruction set (see the top of this file). */
#undef VF
#undef VI
#undef W
#undef TARGET
#undef SUFFIX
#undef V_SET1
#undef V_LOAD
#undef V_STORE
#undef V_FMA
#undef I_SET1
#undef I_STORE
#undef UPDATE
#undef MINS
#undef BLOCK_INDEX
#undef S_FMA
#undef KBLOCK
#undef BLOCK_INDEX_MIN
#undef SCORE_BLOCK
