/*
 * FTDC delta stream decoder: unsigned LEB128 varints in which a 0 is followed by the number of
 * further zeros (runs may continue into the next metric). The compiled twin of
 * ckptdiag.sources.ftdc.decode_deltas' numpy path, which stays as the fallback and the reference:
 * the tests run both on the same inputs.
 *
 * decode(stream, n_metrics, n_deltas) -> bytes holding n_metrics * n_deltas native uint64 deltas.
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

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer in;
    unsigned long long n_metrics, n_deltas;
    if (!PyArg_ParseTuple(args, "y*KK", &in, &n_metrics, &n_deltas)) return NULL;
    if (n_deltas && n_metrics > (unsigned long long)(PY_SSIZE_T_MAX / 8) / n_deltas) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "chunk too large");
        return NULL;
    }
    size_t total = (size_t)(n_metrics * n_deltas);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(total * 8));
    if (!out) { PyBuffer_Release(&in); return NULL; }
    uint64_t *dst = (uint64_t *)PyBytes_AS_STRING(out);
    const uint8_t *p = (const uint8_t *)in.buf, *end = p + in.len;
    size_t i = 0;
    uint64_t zeros = 0, v = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    while (i < total) {
        if (zeros) {
            size_t n = zeros < (uint64_t)(total - i) ? (size_t)zeros : total - i;
            memset(dst + i, 0, n * 8);
            i += n;
            zeros -= n;
            continue;
        }
        rc = read_varint(&p, end, &v);
        if (rc <= 0) break;
        dst[i++] = v;
        if (v == 0) {
            uint64_t count = 0;
            rc = read_varint(&p, end, &count);
            if (rc < 0) break;
            zeros = rc == 0 ? 0 : count;     /* a marker with its count cut off: one zero */
            rc = 1;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (i < total) {
        Py_DECREF(out);
        if (rc < 0) PyErr_SetString(PyExc_ValueError, "varint longer than 10 bytes");
        else PyErr_Format(PyExc_ValueError, "delta stream holds %zu values, the chunk needs %zu", i, total);
        return NULL;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "decode(stream, n_metrics, n_deltas) -> bytes of native uint64 deltas"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ftdc_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ftdc_kernel(void) { return PyModule_Create(&module); }
