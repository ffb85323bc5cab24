/*
 * FTDC delta stream decoder: unsigned LEB128 varints in which a 0 is followed by the number of
 * further zeros (runs may continue into the next metric). The compiled twin of
 * ckptdiag.sources.ftdc.decode_deltas' numpy path, which stays as the fallback and the reference:
 * the tests run both on the same inputs.
 *
 * decode(stream, n_metrics, n_deltas[, lut, n_rows]) -> bytes of native uint64 deltas, metric-major:
 * all n_metrics rows, or with lut (one int32 per metric: its output row, or -1 to drop it) n_rows rows.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
        if (*p >= end) return 0;              /* stream ended inside or before a varint */
        uint8_t b = *(*p)++;
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
        if (shift >= 70) return -1;           /* longer than 10 bytes */
    }
    *out = v;
    return 1;
}

/* Write `count` copies of value v at flat positions i..i+count-1 of the metric-major
 * (n_metrics x n_deltas) matrix, keeping only the rows the lookup maps (lut[m] >= 0). */
static void put_run(uint64_t *dst, const int32_t *lut, size_t n_deltas, size_t i, size_t count, uint64_t v) {
    while (count) {
        size_t m = i / n_deltas, j = i - m * n_deltas;
        size_t take = n_deltas - j < count ? n_deltas - j : count;
        int32_t row = lut ? lut[m] : (int32_t)m;
        if (row >= 0) {
            uint64_t *p = dst + (size_t)row * n_deltas + j;
            if (v == 0) memset(p, 0, take * 8);
            else for (size_t k = 0; k < take; k++) p[k] = v;
        }
        i += take;
        count -= take;
    }
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer in, lutbuf = {0};
    unsigned long long n_metrics, n_deltas;
    Py_ssize_t n_rows = -1;
    if (!PyArg_ParseTuple(args, "y*KK|y*n", &in, &n_metrics, &n_deltas, &lutbuf, &n_rows)) return NULL;
    const int32_t *lut = NULL;
    size_t rows_out = (size_t)n_metrics;
    if (lutbuf.buf != NULL) {
        if ((unsigned long long)lutbuf.len != n_metrics * 4 || n_rows < 0) {
            PyBuffer_Release(&in);
            PyBuffer_Release(&lutbuf);
            PyErr_SetString(PyExc_ValueError, "row lookup must hold one int32 per metric, with the row count");
            return NULL;
        }
        lut = (const int32_t *)lutbuf.buf;
        rows_out = (size_t)n_rows;
    }
    if (n_deltas && (rows_out > (size_t)(PY_SSIZE_T_MAX / 8) / n_deltas || n_metrics > (unsigned long long)(PY_SSIZE_T_MAX / 8) / n_deltas)) {
        PyBuffer_Release(&in);
        if (lut) PyBuffer_Release(&lutbuf);
        PyErr_SetString(PyExc_ValueError, "chunk too large");
        return NULL;
    }
    size_t total = (size_t)(n_metrics * n_deltas);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(rows_out * n_deltas * 8));
    if (!out) { PyBuffer_Release(&in); if (lut) PyBuffer_Release(&lutbuf); return NULL; }
    uint64_t *dst = (uint64_t *)PyBytes_AS_STRING(out);
    const uint8_t *p = (const uint8_t *)in.buf, *end = p + in.len;
    size_t i = 0, nd = (size_t)n_deltas;
    uint64_t v = 0;
    int rc = 1;
    Py_BEGIN_ALLOW_THREADS
    while (i < total) {
        rc = read_varint(&p, end, &v);
        if (rc <= 0) break;
        if (v != 0) {
            put_run(dst, lut, nd, i, 1, v);
            i++;
            continue;
        }
        uint64_t count = 0;
        rc = read_varint(&p, end, &count);
        if (rc < 0) break;
        if (rc == 0) count = 0;               /* a marker with its count cut off: one zero */
        rc = 1;
        size_t n = (size_t)(count + 1 < (uint64_t)(total - i) ? count + 1 : total - i);
        put_run(dst, lut, nd, i, n, 0);
        i += n;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (lut) PyBuffer_Release(&lutbuf);
    if (i < total) {
        Py_DECREF(out);
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "varint longer than 10 bytes");
        else PyErr_Format(PyExc_ValueError, "delta stream holds %zu values, the chunk needs %zu", i, total);
        return NULL;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "decode(stream, n_metrics, n_deltas[, lut, n_rows]) -> bytes of uint64 deltas"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ftdc_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ftdc_kernel(void) { return PyModule_Create(&module); }
