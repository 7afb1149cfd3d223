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
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#define PRIVEVO_X86 1
#include <immintrin.h>
#endif

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
    PyBuffer_Release(&x);
    PyBuffer_Release(&shift);
    PyBuffer_Release(&cand);
    PyBuffer_Release(&labels);
    PyBuffer_Release(&unsure);
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
    Py_ssize_t item = x_is_double ? 8 : 4;
    int64_t cap = (int64_t)(orow.len / 8) < (int64_t)(ocand.len / 8) ? orow.len / 8 : ocand.len / 8;
    if (d < 1 || d > 32 || u < 1 || rows.len < (Py_ssize_t)(nr * 8) ||
        shift.len < (Py_ssize_t)(d * 8) || cand.len < (Py_ssize_t)(u * (d + 1) * 4) ||
        m1.len < (Py_ssize_t)(nr * 4) || flag.len < (Py_ssize_t)nr) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.near_pairs: inconsistent arguments");
        goto done;
    }
    const int64_t *ri = rows.buf;
    for (int64_t i = 0; i < nr; i++) {
        if (ri[i] < 0 || (ri[i] + 1) * d * item > x.len) {
            PyErr_SetString(PyExc_ValueError, "privevo._lowd.near_pairs: row index out of range");
            goto done;
        }
    }
    int64_t count = 0;
    Py_BEGIN_ALLOW_THREADS
    const float *c0 = cand.buf, *mf = m1.buf;
    int64_t *outr = orow.buf, *outc = ocand.buf;
    uint8_t *fl = flag.buf;
    const double mm = max_norm * max_norm;
    float xf[32];
    for (int64_t i = 0; i < nr && count >= 0; i++) {
        double norm2 = 0.0;
        for (int k = 0; k < d; k++) {
            size_t at = (size_t)ri[i] * d + k;
            const double *xd = x.buf;
            const float *xs = x.buf;
            double v = (x_is_double ? xd[at] : (double)xs[at]) - ((const double *)shift.buf)[k];
            xf[k] = (float)v;
            norm2 += (double)xf[k] * (double)xf[k];
        }
        double rn = sqrt(norm2);
        fl[i] = !((rn + max_norm) * (rn + max_norm) <= 1e37 && isfinite(mf[i]));
        if (fl[i]) continue;
        double thr = (double)mf[i] + gamma2 * (2.0 * rn * max_norm + mm + 1e-30);
        count = scan_row(xf, d, c0, u, thr, i, outr, outc, count, cap);
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong(count);
done:
    PyBuffer_Release(&x);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&shift);
    PyBuffer_Release(&cand);
    PyBuffer_Release(&m1);
    PyBuffer_Release(&orow);
    PyBuffer_Release(&ocand);
    PyBuffer_Release(&flag);
    return result;
}

static PyMethodDef methods[] = {
    {"assign", py_assign, METH_VARARGS, "Nearest candidate per row, with an unsure flag."},
    {"near_pairs", py_near_pairs, METH_VARARGS, "Possible nearest candidates of unsure rows."},
    {"best_isa", py_best_isa, METH_NOARGS, "0 scalar, 1 AVX2+FMA, 2 AVX-512F."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lowd", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lowd(void) { return PyModule_Create(&module); }
