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
#undef KBLOCK

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
#undef KBLOCK

/* ------------------------------------------------------------------ AVX-512F */
#define VF __m512
#define VI __m512i
#define W 16
#define TARGET __attribute__((target("avx512f")))
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
#include "lowd_impl.h"
#endif

enum { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

static int best_isa(void)
{
#ifdef PRIVEVO_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return ISA_AVX512;
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
 *        m2_init, m2_out) -> number of unsure rows.
 * Buffers: x (n*d float64/float32), shift (d float64), cand (u*(dp+1) float32), labels
 * (n int64, written), unsure (n uint8, written); m2_init (n float32: an upper bound on each
 * row's second-smallest score, computed by this kernel on a subset of cand) and m2_out (n
 * float32, written) may be None. */
static PyObject *py_assign(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer x, shift, cand, labels, unsure, m2i = {0}, m2o = {0};
    PyObject *m2i_obj, *m2o_obj;
    int x_is_double, d, dp, isa;
    long long n, u;
    double gamma2, max_norm;
    if (!PyArg_ParseTuple(args, "y*iLiy*y*Liddw*w*iOO", &x, &x_is_double, &n, &d, &shift,
                          &cand, &u, &dp, &gamma2, &max_norm, &labels, &unsure, &isa,
                          &m2i_obj, &m2o_obj))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t item = x_is_double ? 8 : 4;
    if ((m2i_obj != Py_None && PyObject_GetBuffer(m2i_obj, &m2i, PyBUF_SIMPLE) < 0) ||
        (m2o_obj != Py_None && PyObject_GetBuffer(m2o_obj, &m2o, PyBUF_WRITABLE) < 0))
        goto done;
    if ((m2i.obj && m2i.len < (Py_ssize_t)(n * 4)) || (m2o.obj && m2o.len < (Py_ssize_t)(n * 4))) {
        PyErr_SetString(PyExc_ValueError, "privevo._lowd.assign: short m2 buffer");
        goto done;
    }
    const float *m2i_p = m2i.obj ? m2i.buf : NULL;
    float *m2o_p = m2o.obj ? m2o.buf : NULL;
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
                                      max_norm, labels.buf, unsure.buf, m2i_p, m2o_p);
    else if (isa == ISA_AVX2)
        n_unsure = assign_rows_avx2(x.buf, x_is_double, n, d, shift.buf, cand.buf, u, dp, gamma2,
                                    max_norm, labels.buf, unsure.buf, m2i_p, m2o_p);
    else
#endif
        n_unsure = assign_rows_scalar(x.buf, x_is_double, n, d, shift.buf, cand.buf, u, dp, gamma2,
                                      max_norm, labels.buf, unsure.buf, m2i_p, m2o_p);
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
    if (m2o.obj) PyBuffer_Release(&m2o);
    return result;
}

static PyMethodDef methods[] = {
    {"assign", py_assign, METH_VARARGS, "Nearest candidate per row, with an unsure flag."},
    {"best_isa", py_best_isa, METH_NOARGS, "0 scalar, 1 AVX2+FMA, 2 AVX-512F."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lowd", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lowd(void) { return PyModule_Create(&module); }
