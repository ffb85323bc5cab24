/*
 * FTDC delta stream decoder: unsigned LEB128 varints in which a 0 is followed by the number of
 * further zeros (runs may continue into the next metric). The compiled twin of
 * ckptdiag.sources.ftdc.decode_deltas' numpy path, which stays as the fallback and the reference:
 * the tests run both on the same inputs.
 *
 * Damaged streams: values are read until the chunk is full (the rest is ignored), a run never
 * goes past it, a marker whose count is missing is one zero, a varint longer than 10 bytes ends
 * the stream; the numpy path follows the same rule (tests compare them on fuzzed streams).
 *
 * decode(stream, n_metrics, n_deltas[, lut, n_rows]) -> bytes of native uint64 deltas, metric-major:
 * all n_metrics rows, or with lut (one int32 per metric: its output row, or -1 to drop it) n_rows rows.
 * A lut is checked once before any write (an entry outside -1..n_rows-1 is a ValueError, never a
 * write out of bounds), and rows no metric maps to come back as zeros, never unwritten.
 *
 * series(stream, n_metrics, n_deltas, lut, n_rows, first) -> bytes of native int64 values, n_rows rows
 * of n_deltas + 1: each row starts with its reference value (first: n_rows native int64) and goes on
 * with the running sums of its deltas (uint64 arithmetic, so it wraps as mongod's int64 deltas do).
 * One pass instead of decode + copy + numpy cumsum: for files of many small chunks the per-chunk
 * work around the decoder cost as much as the decoder.
 *
 * same_shape(raw, ranges, template) -> bool: raw's bytes in ranges (native int64 start, end pairs)
 * equal template (those bytes of the schema's first document, concatenated).
 * reference(raw, offsets, kinds) -> bytes of native int64: the value of each slot (offset, kind) of
 * a reference document by mongod's rules (kinds as ckptdiag.sources.ftdc's K_*; Decimal128 is left
 * to Python). FTDC is little-endian; the build refuses a big-endian host, which then uses numpy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "FTDC kernel reads little-endian values in place: use the numpy path"
#endif

enum { K_DOUBLE = 1, K_INT32, K_INT64, K_BOOL, K_TS_SECS, K_TS_INC, K_DEC128 };

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
 * (n_metrics x n_deltas) matrix, keeping only the rows the lookup maps (lut[m] >= 0); output rows
 * are `stride` values apart and start `skip` values in. */
static void put_run(uint64_t *dst, const int32_t *lut, size_t n_deltas, size_t stride, size_t skip,
                    size_t i, size_t count, uint64_t v) {
    while (count) {
        size_t m = i / n_deltas, j = i - m * n_deltas;
        size_t take = n_deltas - j < count ? n_deltas - j : count;
        int32_t row = lut ? lut[m] : (int32_t)m;
        if (row >= 0) {
            uint64_t *p = dst + (size_t)row * stride + skip + j;
            if (v == 0) memset(p, 0, take * 8);
            else for (size_t k = 0; k < take; k++) p[k] = v;
        }
        i += take;
        count -= take;
    }
}

static uint64_t *row_start(uint64_t *dst, const int32_t *lut, size_t m, size_t stride, size_t skip) {
    int32_t row = lut ? lut[m] : (int32_t)m;
    return row >= 0 ? dst + (size_t)row * stride + skip : NULL;
}

/* The stream into dst (rows `stride` apart, deltas from `skip`): 1 done, 0 short, -1 bad varint;
 * *done is how many of the n_metrics * n_deltas values were read. */
static int run_stream(const uint8_t *p, const uint8_t *end, uint64_t *dst, const int32_t *lut,
                      size_t n_deltas, size_t total, size_t stride, size_t skip, size_t *done) {
    size_t i = 0;
    uint64_t v = 0;
    int rc = 1;
    /* a single value (most of them) is placed from the current metric and position, followed as
     * the stream goes on; only after a zero run is the place worked out again by division */
    size_t m = 0, j = 0, n_metrics = n_deltas ? total / n_deltas : 0;
    int placed = 0;
    uint64_t *row_at = NULL;
    while (i < total) {
        rc = read_varint(&p, end, &v);
        if (rc <= 0) break;
        if (v != 0) {
            if (!placed) {
                m = i / n_deltas;
                j = i - m * n_deltas;
                placed = 1;
                row_at = row_start(dst, lut, m, stride, skip);
            }
            if (row_at) row_at[j] = v;
            i++;
            if (++j == n_deltas) {
                j = 0;
                row_at = ++m < n_metrics ? row_start(dst, lut, m, stride, skip) : NULL;
            }
            continue;
        }
        placed = 0;
        uint64_t count = 0;
        rc = read_varint(&p, end, &count);
        int cut = rc < 0;
        if (rc <= 0) count = 0;               /* a marker with its count cut off: one zero */
        /* a run never goes past the chunk (and count + 1 would wrap at 2^64 - 1) */
        size_t left = total - i;
        size_t n = count >= (uint64_t)left ? left : (size_t)count + 1;
        put_run(dst, lut, n_deltas, stride, skip, i, n, 0);
        i += n;
        if (cut) { rc = -1; break; }          /* a too-long varint ends the stream */
        rc = 1;
    }
    *done = i;
    return i < total ? (rc < 0 ? -1 : 0) : 1;
}

/* Check a row lookup once, before any write through it: every entry is -1 (dropped) or a row
 * below n_rows. Rows no metric maps to are zeroed (stride values each, from `skip`), so that no
 * output is ever returned unwritten. -1 (with a ValueError set) on a bad entry. */
static int check_lut(const int32_t *lut, size_t n_metrics, size_t n_rows, uint64_t *dst, size_t stride, size_t skip) {
    unsigned char *mapped = (unsigned char *)PyMem_Calloc(n_rows ? n_rows : 1, 1);
    if (!mapped) { PyErr_NoMemory(); return -1; }
    for (size_t m = 0; m < n_metrics; m++) {
        int32_t row = lut[m];
        if (row < -1 || (row >= 0 && (size_t)row >= n_rows)) {
            PyMem_Free(mapped);
            PyErr_Format(PyExc_ValueError, "row lookup entry %zu is %d: outside -1..%zd", m, (int)row, (Py_ssize_t)n_rows - 1);
            return -1;
        }
        if (row >= 0) mapped[row] = 1;
    }
    for (size_t r = 0; r < n_rows; r++)
        if (!mapped[r]) memset(dst + r * stride + skip, 0, (stride - skip) * 8);
    PyMem_Free(mapped);
    return 0;
}

static PyObject *stream_error(int rc, size_t done, size_t total) {
    if (rc < 0) PyErr_SetString(PyExc_ValueError, "varint longer than 10 bytes");
    else PyErr_Format(PyExc_ValueError, "delta stream holds %zu values, the chunk needs %zu", done, total);
    return NULL;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    (void)self;
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
    size_t done = 0, nd = (size_t)n_deltas;
    int rc;
    if (lut && check_lut(lut, (size_t)n_metrics, rows_out, dst, nd, 0) < 0) {
        PyBuffer_Release(&in);
        PyBuffer_Release(&lutbuf);
        Py_DECREF(out);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    rc = run_stream(p, end, dst, lut, nd, total, nd, 0, &done);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&in);
    if (lut) PyBuffer_Release(&lutbuf);
    if (rc <= 0) {
        Py_DECREF(out);
        return stream_error(rc, done, total);
    }
    return out;
}

static PyObject *series(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer in, lutbuf, firstbuf;
    unsigned long long n_metrics, n_deltas;
    Py_ssize_t n_rows;
    if (!PyArg_ParseTuple(args, "y*KKy*ny*", &in, &n_metrics, &n_deltas, &lutbuf, &n_rows, &firstbuf)) return NULL;
    PyObject *out = NULL;
    size_t stride = (size_t)n_deltas + 1;
    if ((unsigned long long)lutbuf.len != n_metrics * 4 || n_rows < 0 || firstbuf.len != n_rows * 8) {
        PyErr_SetString(PyExc_ValueError, "need one int32 row lookup per metric and one int64 first value per row");
        goto done;
    }
    if ((size_t)n_rows > (size_t)(PY_SSIZE_T_MAX / 8) / stride
        || (n_deltas && n_metrics > (unsigned long long)(PY_SSIZE_T_MAX / 8) / n_deltas)) {
        PyErr_SetString(PyExc_ValueError, "chunk too large");
        goto done;
    }
    size_t total = (size_t)(n_metrics * n_deltas), rows = (size_t)n_rows, done_n = 0;
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(rows * stride * 8));
    if (!out) goto done;
    uint64_t *dst = (uint64_t *)PyBytes_AS_STRING(out);
    if (check_lut((const int32_t *)lutbuf.buf, (size_t)n_metrics, rows, dst, stride, 1) < 0) {
        Py_CLEAR(out);
        goto done;
    }
    const uint64_t *first = (const uint64_t *)firstbuf.buf;
    const uint8_t *p = (const uint8_t *)in.buf, *end = p + in.len;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_stream(p, end, dst, (const int32_t *)lutbuf.buf, (size_t)n_deltas, total, stride, 1, &done_n);
    if (rc > 0) {
        for (size_t r = 0; r < rows; r++) {
            uint64_t *row = dst + r * stride, acc = first[r];
            row[0] = acc;
            for (size_t j = 1; j < stride; j++) row[j] = acc += row[j];
        }
    }
    Py_END_ALLOW_THREADS
    if (rc <= 0) {
        Py_CLEAR(out);
        stream_error(rc, done_n, total);
    }
done:
    PyBuffer_Release(&in);
    PyBuffer_Release(&lutbuf);
    PyBuffer_Release(&firstbuf);
    return out;
}

static PyObject *same_shape(PyObject *self, PyObject *args) {
    Py_buffer raw, ranges, tmpl;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*", &raw, &ranges, &tmpl)) return NULL;
    const int64_t *r = (const int64_t *)ranges.buf;
    const uint8_t *b = (const uint8_t *)raw.buf, *t = (const uint8_t *)tmpl.buf;
    Py_ssize_t n = ranges.len / 16, at = 0;
    int same = 1;
    for (Py_ssize_t k = 0; k < n && same; k++) {
        int64_t start = r[2 * k], len = r[2 * k + 1] - start;
        if (start < 0 || len < 0 || start + len > raw.len || at + len > tmpl.len) { same = 0; break; }
        same = memcmp(b + start, t + at, (size_t)len) == 0;
        at += len;
    }
    PyBuffer_Release(&raw);
    PyBuffer_Release(&ranges);
    PyBuffer_Release(&tmpl);
    return PyBool_FromLong(same && at == tmpl.len);
}

static int64_t trunc_double(double v) {
    /* numberLong() of a double: toward zero; NaN is 0; out of range saturates */
    if (isnan(v)) return 0;
    if (v >= 9.223372036854775807e18) return INT64_MAX;
    if (v <= -9.223372036854775808e18) return INT64_MIN;
    return (int64_t)v;
}

static PyObject *reference(PyObject *self, PyObject *args) {
    Py_buffer raw, offsets, kinds;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*", &raw, &offsets, &kinds)) return NULL;
    Py_ssize_t n = kinds.len;
    PyObject *out = NULL;
    if (offsets.len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "need one int64 offset per kind");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!out) goto done;
    int64_t *dst = (int64_t *)PyBytes_AS_STRING(out);
    const uint8_t *b = (const uint8_t *)raw.buf;
    const int64_t *off = (const int64_t *)offsets.buf;
    const int8_t *kind = (const int8_t *)kinds.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t o = off[i];
        int width = kind[i] == K_BOOL ? 1 : kind[i] == K_INT32 ? 4 : 8;
        if (o < 0 || o + width > raw.len || kind[i] < K_DOUBLE || kind[i] >= K_DEC128) {
            Py_CLEAR(out);
            PyErr_Format(PyExc_ValueError, "slot %zd: kind %d at byte %lld cannot be read here", i, (int)kind[i], (long long)o);
            goto done;
        }
        int32_t i32; uint64_t u64; double d;
        switch (kind[i]) {
        case K_DOUBLE: memcpy(&d, b + o, 8); dst[i] = trunc_double(d); break;
        case K_INT32: memcpy(&i32, b + o, 4); dst[i] = i32; break;
        case K_BOOL: dst[i] = b[o] != 0; break;
        case K_TS_SECS: memcpy(&u64, b + o, 8); dst[i] = (int64_t)(u64 >> 32); break;
        case K_TS_INC: memcpy(&u64, b + o, 8); dst[i] = (int64_t)(u64 & 0xFFFFFFFFu); break;
        default: memcpy(&u64, b + o, 8); dst[i] = (int64_t)u64; break;  /* K_INT64 */
        }
    }
done:
    PyBuffer_Release(&raw);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&kinds);
    return out;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "decode(stream, n_metrics, n_deltas[, lut, n_rows]) -> bytes of uint64 deltas"},
    {"same_shape", same_shape, METH_VARARGS, "same_shape(raw, ranges, template) -> bool"},
    {"reference", reference, METH_VARARGS, "reference(raw, offsets, kinds) -> bytes of int64 values"},
    {"series", series, METH_VARARGS, "series(stream, n_metrics, n_deltas, lut, n_rows, first) -> bytes of int64 values"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ftdc_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ftdc_kernel(void) { return PyModule_Create(&module); }
