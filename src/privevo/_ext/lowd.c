/* privevo._lowd: fused nearest-candidate search for low-dimensional data (d <= 32).
 *
 * Distance, argmin and second-min in one pass over the candidates, W private
 * rows per vector register, never materialising the n x m score matrix. The
 * caller (privevo._lowd_kernel) re-decides the rows flagged unsure exactly in
 * float64, so counts equal the float64 brute force. Built by setup.py with the
 * Python C API only (buffers, no NumPy headers); AVX-512 / AVX2 versions are
 * compiled with function target attributes and chosen at run time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define PRIVEVO_X86 1
#include <immintrin.h>
#endif

/* PyBuffer_Release on each buffer of a NULL-terminated list: the exit of every entry point
 * (RELEASE_BUFFERS(&a, &b) releases a and b). */
static void release_buffers(Py_buffer *const *views)
{
    for (; *views; views++) PyBuffer_Release(*views);
}
#define RELEASE_BUFFERS(...) release_buffers((Py_buffer *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------ candidate tree
 * For small d a k-d tree over the candidates lets a group of W spatially close rows skip
 * every leaf whose bounding box is provably farther than each row's current second-best
 * float32 score (plus the rounding bound): the skipped candidates' float32 scores all
 * exceed m2, so m1, m2 and the unsure flag are those of the flat scan (see assign_tree).
 * Layout, in one int64 buffer (tree_words): a header, then perm (u int64: tree position ->
 * index into the packed candidates), cand (u x (dp + 1) float32, packed rows in tree order),
 * node (cap x 6 int32: start, end, left, right (-1: leaf), split dim, unused), box (cap x
 * 2dp float32: lo, hi of c = -cand/2, exact), split (cap float32). */
#define TREE_MAGIC 0x70726976744c4456LL

typedef struct {
    int64_t u, dp, d, nnodes, cap, leaf;
    int64_t *perm;
    float *cand;
    int32_t *node;
    float *box;
    float *split;
} tree_view;

static int64_t tree_align(int64_t bytes) { return (bytes + 63) / 64 * 64; }

static int64_t tree_bytes(int64_t u, int64_t dp)
{
    int64_t cap = 2 * u + 1;
    return 64 + tree_align(u * 8) + tree_align(u * (dp + 1) * 4) + tree_align(cap * 6 * 4) +
           tree_align(cap * 2 * dp * 4) + tree_align(cap * 4);
}

/* Pointers into buf (len bytes); 0 when the buffer is not a tree for these sizes. */
static int tree_open(void *buf, int64_t len, tree_view *t)
{
    int64_t *h = buf;
    if (len < 64 || h[0] != TREE_MAGIC) return 0;
    t->u = h[1], t->dp = h[2], t->d = h[3], t->nnodes = h[4], t->leaf = h[5];
    if (t->u < 1 || t->dp < 1 || t->dp > 32 || t->d < 1 || t->d > t->dp ||
        len < tree_bytes(t->u, t->dp))
        return 0;
    t->cap = 2 * t->u + 1;
    char *p = (char *)buf + 64;
    t->perm = (int64_t *)p, p += tree_align(t->u * 8);
    t->cand = (float *)p, p += tree_align(t->u * (t->dp + 1) * 4);
    t->node = (int32_t *)p, p += tree_align(t->cap * 6 * 4);
    t->box = (float *)p, p += tree_align(t->cap * 2 * t->dp * 4);
    t->split = (float *)p;
    return t->nnodes >= 1 && t->nnodes <= t->cap;
}

typedef struct {
    tree_view *t;
    const float *src; /* packed candidates, original order */
    int32_t *idx;
} tree_build;

static inline float tree_key(const tree_build *b, int32_t i, int k)
{
    return -0.5f * b->src[(int64_t)i * (b->t->dp + 1) + k];
}

/* idx[lo, hi) partly ordered by coordinate k so that position nth holds its order statistic
 * (three-way partitions: duplicate keys cannot stall it). */
static void tree_select(tree_build *b, int64_t lo, int64_t hi, int64_t nth, int k)
{
    int32_t *a = b->idx;
    while (hi - lo > 1) {
        float pivot = tree_key(b, a[lo + (hi - lo) / 2], k);
        int64_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            float v = tree_key(b, a[i], k);
            int32_t tmp;
            if (v < pivot) {
                tmp = a[lt], a[lt] = a[i], a[i] = tmp;
                lt++, i++;
            } else if (v > pivot) {
                gt--;
                tmp = a[gt], a[gt] = a[i], a[i] = tmp;
            } else {
                i++;
            }
        }
        if (nth < lt) hi = lt;
        else if (nth >= gt) lo = gt;
        else return;
    }
}

static int32_t tree_node(tree_build *b, int64_t s, int64_t e)
{
    tree_view *t = b->t;
    const int dp = (int)t->dp;
    int32_t id = (int32_t)t->nnodes++;
    float *lo = t->box + (int64_t)id * 2 * dp, *hi = lo + dp;
    for (int k = 0; k < dp; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    for (int64_t j = s; j < e; j++)
        for (int k = 0; k < dp; k++) {
            float v = tree_key(b, b->idx[j], k);
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    int32_t *nd = t->node + (int64_t)id * 6;
    nd[0] = (int32_t)s, nd[1] = (int32_t)e, nd[2] = -1, nd[3] = -1, nd[4] = 0, nd[5] = 0;
    t->split[id] = 0.0f;
    if (e - s > t->leaf) {
        int k = 0;
        for (int kk = 1; kk < (int)t->d; kk++)
            if (hi[kk] - lo[kk] > hi[k] - lo[k]) k = kk;
        int64_t mid = s + (e - s) / 2;
        tree_select(b, s, e, mid, k);
        nd[4] = k;
        t->split[id] = tree_key(b, b->idx[mid], k);
        int32_t l = tree_node(b, s, mid), r = tree_node(b, mid, e);
        nd = t->node + (int64_t)id * 6;
        nd[2] = l, nd[3] = r;
    }
    return id;
}

/* tree_words(u, dp) -> int64 words a tree buffer needs. */
static PyObject *py_tree_words(PyObject *self, PyObject *args)
{
    (void)self;
    long long u, dp;
    if (!PyArg_ParseTuple(args, "LL", &u, &dp)) return NULL;
    if (u < 1 || u >= (1LL << 30) || dp < 1 || dp > 32) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.tree_words: inconsistent arguments");
        return NULL;
    }
    return PyLong_FromLongLong(tree_bytes(u, dp) / 8);
}

/* build_tree(cand, u, dp, d, leaf, buf) -> number of nodes. cand: u x (dp + 1) packed
 * float32 candidates; buf: tree_words(u, dp) int64, written. */
static PyObject *py_build_tree(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer cand, buf;
    long long u;
    int dp, d, leaf;
    if (!PyArg_ParseTuple(args, "y*Liiiw*", &cand, &u, &dp, &d, &leaf, &buf)) return NULL;
    PyObject *result = NULL;
    if (u < 1 || u >= (1LL << 30) || dp < 1 || dp > 32 || d < 1 || d > dp || leaf < 1 ||
        cand.len < (Py_ssize_t)(u * (dp + 1) * 4) || buf.len < (Py_ssize_t)tree_bytes(u, dp)) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.build_tree: inconsistent arguments");
        goto done;
    }
    int32_t *idx = malloc((size_t)u * sizeof(int32_t));
    if (!idx) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t *h = buf.buf;
    memset(h, 0, 64);
    h[0] = TREE_MAGIC, h[1] = u, h[2] = dp, h[3] = d, h[4] = 1, h[5] = leaf;
    tree_view t;
    tree_open(buf.buf, buf.len, &t);
    Py_BEGIN_ALLOW_THREADS
    tree_build b = {&t, cand.buf, idx};
    for (int64_t j = 0; j < u; j++) idx[j] = (int32_t)j;
    t.nnodes = 0;
    tree_node(&b, 0, u);
    for (int64_t j = 0; j < u; j++) {
        t.perm[j] = idx[j];
        memcpy(t.cand + j * (dp + 1), (const float *)cand.buf + (int64_t)idx[j] * (dp + 1),
               (size_t)(dp + 1) * 4);
    }
    Py_END_ALLOW_THREADS
    h[4] = t.nnodes;
    free(idx);
    result = PyLong_FromLongLong(t.nnodes);
done:
    RELEASE_BUFFERS(&cand, &buf);
    return result;
}

/* Lower bound on |x - c|^2 over x in the box [glo, ghi] and c in node nd's box (d dims). */
static inline double tree_box_lb(const tree_view *t, int32_t nd, const float *glo,
                                 const float *ghi)
{
    const float *lo = t->box + (int64_t)nd * 2 * t->dp, *hi = lo + t->dp;
    double s = 0.0;
    for (int k = 0; k < (int)t->d; k++) {
        double a = (double)lo[k] - (double)ghi[k], b = (double)glo[k] - (double)hi[k];
        double g = a > b ? a : b;
        if (g > 0.0) s += g * g;
    }
    return s;
}

#define U32 (1.0 / 16777216.0)

/* Bits 0..b-1 of v moved to bits 0, d, 2d, ... (Morton interleave), d = 1..4 by masks. */
static inline uint32_t tree_spread(uint32_t v, int d, int b)
{
    v &= b >= 32 ? 0xffffffffu : (1u << b) - 1u;
    switch (d) {
    case 1: return v;
    case 2:
        v = (v | (v << 8)) & 0x00ff00ffu;
        v = (v | (v << 4)) & 0x0f0f0f0fu;
        v = (v | (v << 2)) & 0x33333333u;
        return (v | (v << 1)) & 0x55555555u;
    case 3:
        v = (v | (v << 16)) & 0xff0000ffu;
        v = (v | (v << 8)) & 0x0300f00fu;
        v = (v | (v << 4)) & 0x030c30c3u;
        return (v | (v << 2)) & 0x09249249u;
    case 4:
        v = (v | (v << 12)) & 0x000f000fu;
        v = (v | (v << 6)) & 0x03030303u;
        return (v | (v << 3)) & 0x11111111u;
    default: {
        uint32_t r = 0;
        for (int q = 0; q < b && q * d < 32; q++) r |= ((v >> q) & 1u) << (q * d);
        return r;
    }
    }
}

/* Rows [0, n) of x in Morton (Z) order over their bounding box: consecutive rows are
 * close in space. Returns a malloc'd permutation and sets *xs_out to a malloc'd n x d
 * float32 copy of the shifted rows (float)(x - shift) in that order; NULL when out of
 * memory. Coordinates are quantised to bits / d bits each (NaN and infinities to the
 * box's edges), then an LSD radix sort on 11-bit digits. */
static int64_t *tree_row_order(const void *x, int x_is_double, int64_t n, int d,
                               const double *shift, float **xs_out)
{
    const double *xd = x;
    const float *xsrc = x;
    const size_t nn = (size_t)(n > 0 ? n : 1);
    int64_t *order = malloc(nn * sizeof(int64_t)), *tmp = malloc(nn * sizeof(int64_t));
    uint32_t *key = malloc(nn * sizeof(uint32_t)), *key2 = malloc(nn * sizeof(uint32_t));
    float *xf = malloc(nn * d * sizeof(float)), *xs = malloc(nn * d * sizeof(float));
    if (!order || !tmp || !key || !key2 || !xf || !xs) {
        free(order), free(tmp), free(key), free(key2), free(xf), free(xs);
        return NULL;
    }
    const int total = n <= (1 << 16) ? 22 : 32, passes = (total + 10) / 11;
    const int bits = total / d > 0 ? total / d : 1;
    double lo[32], scale[32];
    float flo[32], fhi[32];
    for (int k = 0; k < d; k++) flo[k] = INFINITY, fhi[k] = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < d; k++) {
            size_t at = (size_t)i * d + k;
            double v = x_is_double ? xd[at] : (double)xsrc[at];
            float f = (float)(v - shift[k]);
            xf[at] = f;
            if (f >= -FLT_MAX && f <= FLT_MAX) flo[k] = f < flo[k] ? f : flo[k], fhi[k] = f > fhi[k] ? f : fhi[k];
        }
    const double levels = (double)((1u << (bits < 31 ? bits : 31)) - 1u);
    for (int k = 0; k < d; k++) {
        double span = (double)fhi[k] - (double)flo[k];
        lo[k] = flo[k] <= fhi[k] ? (double)flo[k] : 0.0;
        scale[k] = span > 0.0 ? levels / span : 0.0;
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t kk = 0;
        for (int k = 0; k < d; k++) {
            double q = ((double)xf[(size_t)i * d + k] - lo[k]) * scale[k];
            uint32_t qi = q > 0.0 ? (q < levels ? (uint32_t)q : (uint32_t)levels) : 0u;
            kk |= tree_spread(qi, d, bits) << k;
        }
        key[i] = kk;
        order[i] = i;
    }
    for (int pass = 0; pass < passes; pass++) {
        int64_t cnt[2049];
        memset(cnt, 0, sizeof cnt);
        const int sh = 11 * pass;
        for (int64_t i = 0; i < n; i++) cnt[((key[i] >> sh) & 2047u) + 1]++;
        for (int b = 0; b < 2048; b++) cnt[b + 1] += cnt[b];
        for (int64_t i = 0; i < n; i++) {
            int64_t at = cnt[(key[i] >> sh) & 2047u]++;
            key2[at] = key[i];
            tmp[at] = order[i];
        }
        uint32_t *tk = key;
        key = key2, key2 = tk;
        int64_t *to = order;
        order = tmp, tmp = to;
    }
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < d; k++) xs[(size_t)i * d + k] = xf[(size_t)order[i] * d + k];
    free(tmp), free(key), free(key2), free(xf);
    *xs_out = xs;
    return order;
}

/* The padded dimensions dp with a kernel of their own (the caller, privevo.private.lowd,
 * pads d with zeros up to one of them): X(dp) for each. */
#define PADDED_DIMS(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(24) X(32)

/* ------------------------------------------------------------------ scalar */
#define VF float
#define VI int32_t
#define W 1
#define TARGET
#define SUFFIX(name) name##_scalar
#define V_SET1(f) (f)
#define V_LOAD(p) (*(p))
#define V_STORE(p, v) (*(p) = (v))
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define I_SET1(i) (i)
#define I_STORE(p, v) (*(p) = (v))
#define UPDATE(s, jj, m1, m2, idx)                                                         \
    do {                                                                                   \
        float s_ = (s);                                                                    \
        if (s_ < m1) {                                                                     \
            m2 = m1;                                                                       \
            m1 = s_;                                                                       \
            idx = (jj);                                                                    \
        } else if (s_ < m2) {                                                              \
            m2 = s_;                                                                       \
        }                                                                                  \
    } while (0)
#include "lowd_impl.h"

#ifdef PRIVEVO_X86
/* ------------------------------------------------------------------ AVX2 + FMA */
#define VF __m256
#define VI __m256i
#define W 8
#define TARGET __attribute__((target("avx2,fma")))
#define SUFFIX(name) name##_avx2
#define V_SET1(f) _mm256_set1_ps(f)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps((p), (v))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define I_SET1(i) _mm256_set1_epi32(i)
#define I_STORE(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define UPDATE(s, jj, m1, m2, idx)                                                         \
    do {                                                                                   \
        __m256 s_ = (s);                                                                   \
        __m256 lt_ = _mm256_cmp_ps(s_, m1, _CMP_LT_OQ);                                    \
        m2 = _mm256_min_ps(m2, _mm256_max_ps(m1, s_));                                     \
        m1 = _mm256_min_ps(m1, s_);                                                        \
        idx = _mm256_castps_si256(_mm256_blendv_ps(                                        \
            _mm256_castsi256_ps(idx), _mm256_castsi256_ps(_mm256_set1_epi32(jj)), lt_));   \
    } while (0)
#define MINS(s, m1, m2)                                                                    \
    do {                                                                                   \
        m2 = _mm256_min_ps(m2, _mm256_max_ps(m1, (s)));                                    \
        m1 = _mm256_min_ps(m1, (s));                                                       \
    } while (0)
#define BLOCK_INDEX(idx, m1, before, j)                                                    \
    idx = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(idx),                   \
        _mm256_castsi256_ps(_mm256_set1_epi32(j)), _mm256_cmp_ps((m1), (before), _CMP_LT_OQ)))
#define S_FMA(a, b, c) fmaf((a), (b), (c))
#include "lowd_impl.h"

/* ------------------------------------------------------------------ AVX-512F */
#define VF __m512
#define VI __m512i
#define W 16
#define TARGET __attribute__((target("avx512f,fma")))
#define SUFFIX(name) name##_avx512
#define V_SET1(f) _mm512_set1_ps(f)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps((p), (v))
#define V_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define I_SET1(i) _mm512_set1_epi32(i)
#define I_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
#define UPDATE(s, jj, m1, m2, idx)                                                         \
    do {                                                                                   \
        __m512 s_ = (s);                                                                   \
        __mmask16 lt_ = _mm512_cmp_ps_mask(s_, m1, _CMP_LT_OQ);                            \
        m2 = _mm512_min_ps(m2, _mm512_max_ps(m1, s_));                                     \
        m1 = _mm512_min_ps(m1, s_);                                                        \
        idx = _mm512_mask_mov_epi32(idx, lt_, _mm512_set1_epi32(jj));                      \
    } while (0)
#define MINS(s, m1, m2)                                                                    \
    do {                                                                                   \
        m2 = _mm512_min_ps(m2, _mm512_max_ps(m1, (s)));                                    \
        m1 = _mm512_min_ps(m1, (s));                                                       \
    } while (0)
#define BLOCK_INDEX(idx, m1, before, j)                                                    \
    idx = _mm512_mask_mov_epi32((idx), _mm512_cmp_ps_mask((m1), (before), _CMP_LT_OQ),     \
                                _mm512_set1_epi32(j))
#define S_FMA(a, b, c) fmaf((a), (b), (c))
#include "lowd_impl.h"
#endif

enum { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

static int best_isa(void)
{
#ifdef PRIVEVO_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ISA_AVX2;
#endif
    return ISA_SCALAR;
}

static PyObject *py_best_isa(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(best_isa());
}

/* assign(x, x_is_double, n, d, shift, cand, u, dp, gamma2, max_norm, labels, unsure, isa,
 *        m2_init, m1_out) -> number of unsure rows.
 * Buffers: x (n*d float64/float32), shift (d float64), cand (u*(dp+1) float32), labels
 * (n int64, written), unsure (n uint8, written); m2_init (n float32: an upper bound on each
 * row's second-smallest score, computed by this kernel on a subset of cand) and m1_out (n
 * float32, written: each row's smallest float32 score) may be None. */
static PyObject *py_assign(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer x, shift, cand, labels, unsure, m2i = {0}, m1o = {0};
    PyObject *m2i_obj, *m1o_obj;
    int x_is_double, d, dp, isa;
    long long n, u;
    double gamma2, max_norm;
    if (!PyArg_ParseTuple(args, "y*iLiy*y*Liddw*w*iOO", &x, &x_is_double, &n, &d, &shift,
                          &cand, &u, &dp, &gamma2, &max_norm, &labels, &unsure, &isa,
                          &m2i_obj, &m1o_obj))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t item = x_is_double ? 8 : 4;
    if ((m2i_obj != Py_None && PyObject_GetBuffer(m2i_obj, &m2i, PyBUF_SIMPLE) < 0) ||
        (m1o_obj != Py_None && PyObject_GetBuffer(m1o_obj, &m1o, PyBUF_WRITABLE) < 0))
        goto done;
    if ((m2i.obj && m2i.len < (Py_ssize_t)(n * 4)) || (m1o.obj && m1o.len < (Py_ssize_t)(n * 4))) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign: short m2 buffer");
        goto done;
    }
    const float *m2i_p = m2i.obj ? m2i.buf : NULL;
    float *m1o_p = m1o.obj ? m1o.buf : NULL;
    if (n < 0 || d < 1 || d > dp || dp > 32 || u < 1 || u >= (1LL << 31) ||
        x.len < (Py_ssize_t)(n * d * item) || shift.len < (Py_ssize_t)(d * 8) ||
        cand.len < (Py_ssize_t)(u * (dp + 1) * 4) || labels.len < (Py_ssize_t)(n * 8) ||
        unsure.len < (Py_ssize_t)n || isa < ISA_SCALAR || isa > best_isa()) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign: inconsistent arguments");
        goto done;
    }
    int64_t n_unsure;
    Py_BEGIN_ALLOW_THREADS
#ifdef PRIVEVO_X86
    if (isa == ISA_AVX512)
        n_unsure = assign_rows_avx512(x.buf, x_is_double, n, d, shift.buf, cand.buf, u, dp, gamma2,
                                      max_norm, labels.buf, unsure.buf, m2i_p, m1o_p);
    else if (isa == ISA_AVX2)
        n_unsure = assign_rows_avx2(x.buf, x_is_double, n, d, shift.buf, cand.buf, u, dp, gamma2,
                                    max_norm, labels.buf, unsure.buf, m2i_p, m1o_p);
    else
#endif
        n_unsure = assign_rows_scalar(x.buf, x_is_double, n, d, shift.buf, cand.buf, u, dp, gamma2,
                                      max_norm, labels.buf, unsure.buf, m2i_p, m1o_p);
    Py_END_ALLOW_THREADS
    if (n_unsure < 0)
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign: unsupported padded dimension");
    else
        result = PyLong_FromLongLong(n_unsure);
done:
    RELEASE_BUFFERS(&x, &shift, &cand, &labels, &unsure);
    if (m2i.obj) PyBuffer_Release(&m2i);
    if (m1o.obj) PyBuffer_Release(&m1o);
    return result;
}

#if defined(PRIVEVO_X86) && defined(__linux__)
#define SCAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SCAN_CLONES
#endif
#define SCAN_BLOCK 256

/* Row `row` of x (float64 or float32) minus the candidates' mean, as float32 in xf;
   returns its norm and stores the squared norm in *norm2 (the fix-up's rounding bound). */
static double shifted_row(const void *xbuf, int x_is_double, int64_t row, int d,
                          const double *shift, float *xf, double *norm2)
{
    double n2 = 0.0;
    for (int k = 0; k < d; k++) {
        size_t at = (size_t)row * d + k;
        double v = (x_is_double ? ((const double *)xbuf)[at] : (double)((const float *)xbuf)[at])
                   - shift[k];
        xf[k] = (float)v;
        n2 += (double)xf[k] * (double)xf[k];
    }
    *norm2 = n2;
    return sqrt(n2);
}

/* Candidates j of ct ((d + 1) x u float32: rows -2(c - shift), then |c - shift|^2) with
 * score(x, j) <= thr, appended to out[count..cap); returns the new count or -1 when full.
 * Scores by blocks of SCAN_BLOCK candidates (vectorised by the compiler). */
static SCAN_CLONES int64_t scan_row(const float *xf, int d, const float *ct, int64_t u, double thr,
                                    int64_t i, int64_t *outr, int64_t *outc, int64_t count,
                                    int64_t cap)
{
    float s[SCAN_BLOCK];
    const float thrf = nextafterf((float)thr, INFINITY); /* rounded up: still a superset */
    for (int64_t j0 = 0; j0 < u; j0 += SCAN_BLOCK) {
        int nb = u - j0 < SCAN_BLOCK ? (int)(u - j0) : SCAN_BLOCK;
        const float *sq = ct + (int64_t)d * u + j0;
        for (int t = 0; t < nb; t++) s[t] = sq[t];
        for (int k = 0; k < d; k++) {
            const float *row = ct + (int64_t)k * u + j0;
            const float xk = xf[k];
            for (int t = 0; t < nb; t++) s[t] = xk * row[t] + s[t];
        }
        int any = 0;
        for (int t = 0; t < nb; t++) any |= s[t] <= thrf;
        if (!any) continue;
        for (int t = 0; t < nb; t++) {
            if (s[t] <= thrf) {
                if (count >= cap) return -1;
                outr[count] = i;
                outc[count] = j0 + t;
                count++;
            }
        }
    }
    return count;
}

/* The part of near_pairs and near_pairs_tree after their argument checks: every row index
 * in range (else ValueError naming `name`), then for each row its flag and its pairs, by the
 * flat scan of ct (t == NULL) or through the candidate tree t. Returns the pair count as a
 * Python int (-1: the outputs are too short), or NULL with the error set. */
static int64_t tree_scan_row(const tree_view *t, const float *xf, double thr, double margin,
                             double norm2, int64_t i, int64_t *outr, int64_t *outc,
                             int64_t count, int64_t cap);

static PyObject *near_pairs_rows(const char *name, const Py_buffer *x, int x_is_double, int d,
                                 const int64_t *ri, int64_t nr, const double *shift,
                                 const float *ct, int64_t u, const tree_view *t, double gamma2,
                                 double max_norm, const float *mf, int64_t *outr, int64_t *outc,
                                 uint8_t *fl, int64_t cap)
{
    const Py_ssize_t item = x_is_double ? 8 : 4;
    for (int64_t i = 0; i < nr; i++) {
        if (ri[i] < 0 || (ri[i] + 1) * d * item > x->len) {
            PyErr_Format(PyExc_ValueError, "privevo._lowd.%s: row index out of range", name);
            return NULL;
        }
    }
    int64_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    const double mm = max_norm * max_norm;
    float xf[32];
    for (int64_t i = 0; i < nr && count >= 0; i++) {
        double norm2;
        double rn = shifted_row(x->buf, x_is_double, ri[i], d, shift, xf, &norm2);
        fl[i] = !((rn + max_norm) * (rn + max_norm) <= 1e37 && isfinite(mf[i]));
        if (fl[i]) continue;
        double margin = gamma2 * (2.0 * rn * max_norm + mm + 1e-30);
        double thr = (double)mf[i] + margin;
        count = t ? tree_scan_row(t, xf, thr, margin, norm2, i, outr, outc, count, cap)
                  : scan_row(xf, d, ct, u, thr, i, outr, outc, count, cap);
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromLongLong(count);
}

/* near_pairs(x, x_is_double, d, rows, nr, shift, ct, u, gamma2, max_norm, m1, out_row,
 *            out_cand, flag) -> number of pairs, or -1 when out_* are too short.
 * For the unsure rows (indices rows[0..nr) into x, m1 their smallest float32 score from
 * assign): every candidate whose float32 score, in any summation order, is within the
 * bound gamma2 * (2|x| max|c| + max|c|^2) of m1 could be the exact nearest; (i, j) pairs
 * with i in 0..nr. ct is the (d + 1) x u transposed float32 candidate table. A row that
 * assign flagged for its size or non-finite values gets flag[i] = 1 and no pairs. */
static PyObject *py_near_pairs(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer x, rows, shift, cand, m1, orow, ocand, flag;
    int x_is_double, d;
    long long nr, u;
    double gamma2, max_norm;
    if (!PyArg_ParseTuple(args, "y*iiy*Ly*y*Lddy*w*w*w*", &x, &x_is_double, &d, &rows, &nr, &shift,
                          &cand, &u, &gamma2, &max_norm, &m1, &orow, &ocand, &flag))
        return NULL;
    PyObject *result = NULL;
    int64_t cap = (int64_t)(orow.len / 8) < (int64_t)(ocand.len / 8) ? orow.len / 8 : ocand.len / 8;
    if (d < 1 || d > 32 || u < 1 || rows.len < (Py_ssize_t)(nr * 8) ||
        shift.len < (Py_ssize_t)(d * 8) || cand.len < (Py_ssize_t)(u * (d + 1) * 4) ||
        m1.len < (Py_ssize_t)(nr * 4) || flag.len < (Py_ssize_t)nr) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.near_pairs: inconsistent arguments");
        goto done;
    }
    result = near_pairs_rows("near_pairs", &x, x_is_double, d, rows.buf, nr, shift.buf, cand.buf,
                             u, NULL, gamma2, max_norm, m1.buf, orow.buf, ocand.buf, flag.buf, cap);
done:
    RELEASE_BUFFERS(&x, &rows, &shift, &cand, &m1, &orow, &ocand, &flag);
    return result;
}

/* assign_tree(x, x_is_double, n, d, shift, tree, gamma2, max_norm, labels, unsure, isa, m1_out)
 * -> number of unsure rows: assign() with the candidate tree (build_tree); labels are
 * indices into the packed candidates as with assign. */
static PyObject *py_assign_tree(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer x, shift, tree, labels, unsure, m1o;
    int x_is_double, d, isa;
    long long n;
    double gamma2, max_norm;
    if (!PyArg_ParseTuple(args, "y*iLiy*y*ddw*w*iw*", &x, &x_is_double, &n, &d, &shift, &tree,
                          &gamma2, &max_norm, &labels, &unsure, &isa, &m1o))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t item = x_is_double ? 8 : 4;
    tree_view t;
    if (!tree_open(tree.buf, tree.len, &t) || n < 0 || d != t.d ||
        x.len < (Py_ssize_t)(n * d * item) || shift.len < (Py_ssize_t)(d * 8) ||
        labels.len < (Py_ssize_t)(n * 8) || unsure.len < (Py_ssize_t)n ||
        m1o.len < (Py_ssize_t)(n * 4) || isa < ISA_SCALAR || isa > best_isa()) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign_tree: inconsistent arguments");
        goto done;
    }
    int64_t n_unsure;
    Py_BEGIN_ALLOW_THREADS
#ifdef PRIVEVO_X86
    if (isa == ISA_AVX512)
        n_unsure = assign_tree_rows_avx512(x.buf, x_is_double, n, d, shift.buf, &t, gamma2,
                                           max_norm, labels.buf, unsure.buf, m1o.buf);
    else if (isa == ISA_AVX2)
        n_unsure = assign_tree_rows_avx2(x.buf, x_is_double, n, d, shift.buf, &t, gamma2,
                                         max_norm, labels.buf, unsure.buf, m1o.buf);
    else
#endif
        n_unsure = assign_tree_rows_scalar(x.buf, x_is_double, n, d, shift.buf, &t, gamma2,
                                           max_norm, labels.buf, unsure.buf, m1o.buf);
    Py_END_ALLOW_THREADS
    if (n_unsure == -2)
        PyErr_NoMemory();
    else if (n_unsure < 0)
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign_tree: unsupported padded dimension");
    else
        result = PyLong_FromLongLong(n_unsure);
done:
    RELEASE_BUFFERS(&x, &shift, &tree, &labels, &unsure, &m1o);
    return result;
}

/* Pairs (i, j) of one row with the candidates of the tree whose float32 score is <= thr
 * (any summation order: subtrees are skipped only when |x - c|^2 - |x|^2 exceeds thr by
 * more than the rounding bound margin); returns the new count or -1 when full. */
static int64_t tree_scan_row(const tree_view *t, const float *xf, double thr, double margin,
                             double norm2, int64_t i, int64_t *outr, int64_t *outc,
                             int64_t count, int64_t cap)
{
    const int dp = (int)t->dp, d = (int)t->d;
    const float thrf = nextafterf((float)thr, INFINITY); /* rounded up: still a superset */
    const double lim = thr + norm2 + margin + 8.0 * U32 * (norm2 + fabs(thr)) + 1e-30;
    int32_t stack[160];
    int sp = 1;
    stack[0] = 0;
    while (sp > 0) {
        const int32_t nd = stack[--sp];
        if (tree_box_lb(t, nd, xf, xf) > lim) continue;
        const int32_t *nn = t->node + (int64_t)nd * 6;
        if (nn[2] >= 0) {
            stack[sp++] = nn[3];
            stack[sp++] = nn[2];
            continue;
        }
        for (int64_t j = nn[0]; j < nn[1]; j++) {
            const float *c = t->cand + j * (dp + 1);
            float s = c[dp];
            for (int k = 0; k < d; k++) s = xf[k] * c[k] + s;
            if (s <= thrf) {
                if (count >= cap) return -1;
                outr[count] = i;
                outc[count] = t->perm[j];
                count++;
            }
        }
    }
    return count;
}

/* near_pairs_tree(x, x_is_double, d, rows, nr, shift, tree, gamma2, max_norm, m1, out_row,
 *                 out_cand, flag): near_pairs with the candidate tree (same outputs, the
 * pairs in another order). */
static PyObject *py_near_pairs_tree(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer x, rows, shift, tree, m1, orow, ocand, flag;
    int x_is_double, d;
    long long nr;
    double gamma2, max_norm;
    if (!PyArg_ParseTuple(args, "y*iiy*Ly*y*ddy*w*w*w*", &x, &x_is_double, &d, &rows, &nr,
                          &shift, &tree, &gamma2, &max_norm, &m1, &orow, &ocand, &flag))
        return NULL;
    PyObject *result = NULL;
    int64_t cap = (int64_t)(orow.len / 8) < (int64_t)(ocand.len / 8) ? orow.len / 8 : ocand.len / 8;
    tree_view t;
    if (!tree_open(tree.buf, tree.len, &t) || d != t.d || nr < 0 ||
        rows.len < (Py_ssize_t)(nr * 8) || shift.len < (Py_ssize_t)(d * 8) ||
        m1.len < (Py_ssize_t)(nr * 4) || flag.len < (Py_ssize_t)nr) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.near_pairs_tree: inconsistent arguments");
        goto done;
    }
    result = near_pairs_rows("near_pairs_tree", &x, x_is_double, d, rows.buf, nr, shift.buf, NULL,
                             0, &t, gamma2, max_norm, m1.buf, orow.buf, ocand.buf, flag.buf, cap);
done:
    RELEASE_BUFFERS(&x, &rows, &shift, &tree, &m1, &orow, &ocand, &flag);
    return result;
}

static PyMethodDef methods[] = {
    {"assign", py_assign, METH_VARARGS, "Nearest candidate per row, with an unsure flag."},
    {"near_pairs", py_near_pairs, METH_VARARGS, "Possible nearest candidates of unsure rows."},
    {"tree_words", py_tree_words, METH_VARARGS, "int64 words of a candidate tree buffer."},
    {"build_tree", py_build_tree, METH_VARARGS, "k-d tree over packed candidates."},
    {"assign_tree", py_assign_tree, METH_VARARGS, "assign() with the candidate tree."},
    {"near_pairs_tree", py_near_pairs_tree, METH_VARARGS, "near_pairs() with the candidate tree."},
    {"best_isa", py_best_isa, METH_NOARGS, "0 scalar, 1 AVX2+FMA, 2 AVX-512F."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lowd", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lowd(void) { return PyModule_Create(&module); }
