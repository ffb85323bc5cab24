/*
 * Recording reader's scanner: the numbers of many JSON lines in one pass, without building a
 * Python object per value. A day of 1 Hz samples is 86,400 lines of ~100-200 numbers each; turning
 * them into dicts of floats and back into columns cost more than everything else `report` does.
 *
 * scan(text, end) -> (values, lines)
 *   text[:end] holds newline-separated JSON lines. For every line that is not blank:
 *   values gets its number tokens (outside strings, in document order) as native float64, and
 *   lines gets five native int64: start offset, end offset (exclusive, without the newline),
 *   the line's shape hash, its count of numbers, and the index of its first number in values.
 *   The shape hash is 64-bit FNV-1a over every byte that is not part of a number token, with one
 *   marker byte per number: lines of the same shape (same keys, strings, true/false/null, same
 *   layout) hash alike whatever their numbers. A line whose number tokens do not all follow JSON's
 *   grammar gets count -1: the caller parses that one line itself.
 *
 * The Python reader (ckptdiag.recording) parses one line of each shape with a JSON parser to name
 * the numbers, checks it, and places all lines of that shape at once; without this module it
 * parses every line (same results, the tests compare both).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL
#define NUMBER_MARK 0x23 /* '#' stands for each number in the hash */

typedef struct {
    char *buf;
    Py_ssize_t len, cap; /* in bytes */
} growbuf;

static int grow_put(growbuf *g, const void *item, Py_ssize_t size) {
    if (g->len + size > g->cap) {
        Py_ssize_t cap = g->cap ? g->cap * 2 : 1 << 20;
        while (cap < g->len + size) cap *= 2;
        char *p = PyMem_Realloc(g->buf, (size_t)cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        g->buf = p;
        g->cap = cap;
    }
    memcpy(g->buf + g->len, item, (size_t)size);
    g->len += size;
    return 0;
}

/* Length of a JSON number token at p (p < end, *p is '-' or a digit), or 0 if it breaks the grammar:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static Py_ssize_t number_length(const char *p, const char *end) {
    const char *q = p;
    if (q < end && *q == '-') q++;
    if (q >= end) return 0;
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (q < end && *q >= '0' && *q <= '9') q++;
    } else {
        return 0;
    }
    if (q < end && *q == '.') {
        q++;
        if (q >= end || *q < '0' || *q > '9') return 0;
        while (q < end && *q >= '0' && *q <= '9') q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || *q < '0' || *q > '9') return 0;
        while (q < end && *q >= '0' && *q <= '9') q++;
    }
    return q - p;
}

/* Most numbers in a recording are counters: integers of up to 15 digits are exact in a double,
 * so they need no general parser (which costs most of the scan). */
static int plain_integer(const char *p, Py_ssize_t n, double *out) {
    int neg = *p == '-';
    if (n - neg > 15) return 0;
    int64_t v = 0;
    for (Py_ssize_t i = neg; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -(double)v : (double)v;
    return 1;
}

static int is_blank(const char *p, const char *end) {
    for (; p < end; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f')) return 0;
    return 1;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer in;
    Py_ssize_t end;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*n", &in, &end)) return NULL;
    if (end < 0 || end > in.len) end = in.len;
    const char *text = (const char *)in.buf;
    growbuf values = {0}, lines = {0};
    char token[64];
    PyObject *out = NULL;
    Py_ssize_t n_values = 0, start = 0;
    while (start < end) {
        const char *nl = memchr(text + start, '\n', (size_t)(end - start));
        Py_ssize_t stop = nl ? nl - text : end;
        const char *p = text + start, *e = text + stop;
        if (!is_blank(p, e)) {
            uint64_t hash = FNV_OFFSET;
            int64_t count = 0, first = n_values;
            int bad = 0, in_string = 0;
            while (p < e) {
                char c = *p;
                if (in_string) {
                    if (c == '\\' && p + 1 < e) {
                        hash = (hash ^ (uint8_t)c) * FNV_PRIME;
                        p++;
                        c = *p;
                    } else if (c == '"') {
                        in_string = 0;
                    }
                    hash = (hash ^ (uint8_t)c) * FNV_PRIME;
                    p++;
                    continue;
                }
                if (c == '-' || (c >= '0' && c <= '9')) {
                    Py_ssize_t n = number_length(p, e);
                    if (n == 0 || n >= (Py_ssize_t)sizeof token) {
                        bad = 1;
                        break;
                    }
                    double v;
                    if (!plain_integer(p, n, &v)) {
                        memcpy(token, p, (size_t)n);
                        token[n] = '\0';
                        /* locale-independent, correctly rounded: the same double a JSON parser gives */
                        v = PyOS_string_to_double(token, NULL, NULL);
                        if (v == -1.0 && PyErr_Occurred()) {
                            PyErr_Clear();
                            bad = 1;
                            break;
                        }
                    }
                    if (grow_put(&values, &v, sizeof v) < 0) goto fail;
                    n_values++;
                    count++;
                    hash = (hash ^ NUMBER_MARK) * FNV_PRIME;
                    p += n;
                    continue;
                }
                if (c == '"') in_string = 1;
                hash = (hash ^ (uint8_t)c) * FNV_PRIME;
                p++;
            }
            if (bad) {
                /* drop this line's numbers: the caller parses it on its own */
                values.len = (Py_ssize_t)first * (Py_ssize_t)sizeof(double);
                n_values = first;
                count = -1;
            }
            int64_t row[5] = {start, stop, (int64_t)hash, count, first};
            if (grow_put(&lines, row, sizeof row) < 0) goto fail;
        }
        start = stop + 1;
    }
    out = Py_BuildValue("(y#y#)", values.buf ? values.buf : "", values.len, lines.buf ? lines.buf : "", lines.len);
fail:
    PyMem_Free(values.buf);
    PyMem_Free(lines.buf);
    PyBuffer_Release(&in);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "scan(text, end) -> (float64 values, int64 [start, end, hash, count, first] per line)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonl", NULL, -1, methods};

PyMODINIT_FUNC PyInit__jsonl(void) { return PyModule_Create(&module); }
