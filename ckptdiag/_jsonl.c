/*
 * Recording reader's scanner: the numbers of many JSON lines in one pass, without building a
 * Python object per value. A day of 1 Hz samples is 86,400 lines of ~100-200 numbers each; turning
 * them into dicts of floats and back into columns cost more than everything else `report` does.
 *
 * scan(text, end, begin=0) -> (values, lines)
 *   text[begin:end] holds newline-separated JSON lines (begin at a line's start). For every line
 *   that is not blank:
 *   values gets its number tokens (outside strings, in document order) as native float64, and
 *   lines gets five native int64: start offset, end offset (exclusive, without the newline),
 *   the line's shape hash, its count of numbers, and the index of its first number in values.
 *   The shape hash is a 64-bit hash of every byte that is not part of a number token, with one
 *   marker per number: lines of the same shape (same keys, strings, true/false/null, same
 *   layout) hash alike whatever their numbers. A string's contents are hashed 8 bytes at a time
 *   (keys are most of a line's bytes), everything else a byte at a time. A line whose number
 *   tokens do not all follow JSON's grammar gets count -1: the caller parses that one line itself.
 *   The GIL is released while scanning (the caller may scan two halves of a text at once); it is
 *   taken back only for a number that needs the general parser (Clinger's fast path covers up to
 *   15 significant digits with a power of ten up to 22: the correctly rounded double, exactly).
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

/* A growing output held in a bytes object from the start, so that the result is returned without
   a copy (a day's numbers are ~100 MB). It grows while the GIL is released: it takes the GIL back
   for the few doublings (*saved is the released thread state). */
typedef struct {
    PyObject *obj; /* bytes, or NULL before the first item */
    Py_ssize_t len, cap; /* in bytes */
} growbuf;

static int grow_put(growbuf *g, const void *item, Py_ssize_t size, PyThreadState **saved) {
    if (g->len + size > g->cap) {
        Py_ssize_t cap = g->cap ? g->cap * 2 : 1 << 20;
        while (cap < g->len + size) cap *= 2;
        PyEval_RestoreThread(*saved);
        int failed;
        if (g->obj == NULL) {
            g->obj = PyBytes_FromStringAndSize(NULL, cap);
            failed = g->obj == NULL;
        } else {
            failed = _PyBytes_Resize(&g->obj, cap) < 0; /* on failure it frees obj and sets NULL */
        }
        *saved = PyEval_SaveThread();
        if (failed) return -1;
        g->cap = cap;
    }
    memcpy(PyBytes_AS_STRING(g->obj) + g->len, item, (size_t)size);
    g->len += size;
    return 0;
}

/* The output as a bytes object of its exact length (a new reference), or NULL with an error set. */
static PyObject *grow_take(growbuf *g) {
    if (g->obj == NULL) return PyBytes_FromStringAndSize(NULL, 0);
    PyObject *out = g->obj;
    g->obj = NULL;
    if (_PyBytes_Resize(&out, g->len) < 0) return NULL;
    return out;
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

/* Most numbers in a recording are counters and times: up to 15 significant digits, a few after
 * the point. Such a number is m x 10^k with m < 2^53 and |k| <= 22, both exact in a double, and
 * one IEEE multiplication or division of the two is correctly rounded (Clinger's fast path): the
 * double a JSON parser gives, without the general parser (which cost most of the scan). */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int fast_number(const char *p, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0;
    int neg = p[0] == '-';
    if (neg) i++;
    int64_t m = 0;
    int digits = 0, started = 0;
    int k = 0; /* value = m x 10^k */
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        if (p[i] != '0' || started) {
            started = 1;
            if (++digits > 15) return 0;
        }
        m = m * 10 + (p[i] - '0');
    }
    if (i < n && p[i] == '.') {
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            if (p[i] != '0' || started) {
                started = 1;
                if (++digits > 15) return 0;
            }
            m = m * 10 + (p[i] - '0');
            k--;
        }
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        int eneg = 0, e = 0;
        if (i < n && (p[i] == '+' || p[i] == '-')) eneg = p[i++] == '-';
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            e = e * 10 + (p[i] - '0');
            if (e > 400) return 0;
        }
        k += eneg ? -e : e;
    }
    if (i != n || k < -22 || k > 22) return 0;
    double v = (double)m; /* exact: m < 10^15 < 2^53 */
    v = k < 0 ? v / POW10[-k] : v * POW10[k];
    *out = neg ? -v : v;
    return 1;
}

/* A 64-bit mix of a word into the hash (one multiplication per 8 bytes of a string). */
static inline uint64_t mix(uint64_t h, uint64_t w) {
    h ^= w;
    h *= 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

static int is_blank(const char *p, const char *end) {
    for (; p < end; p++)
        if (!(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f')) return 0;
    return 1;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer in;
    Py_ssize_t end, begin = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*n|n", &in, &end, &begin)) return NULL;
    if (end < 0 || end > in.len) end = in.len;
    if (begin < 0 || begin > end) begin = end;
    const char *text = (const char *)in.buf;
    growbuf values = {0}, lines = {0};
    char token[64];
    PyObject *out = NULL;
    int no_memory = 0;
    Py_ssize_t n_values = 0, start = begin;
    PyThreadState *saved = PyEval_SaveThread();
    while (start < end) {
        const char *nl = memchr(text + start, '\n', (size_t)(end - start));
        Py_ssize_t stop = nl ? nl - text : end;
        const char *p = text + start, *e = text + stop;
        if (!is_blank(p, e)) {
            uint64_t hash = FNV_OFFSET;
            int64_t count = 0, first = n_values;
            int bad = 0;
            while (p < e) {
                char c = *p;
                if (c == '"') {
                    /* a string: its bytes up to the closing quote, 8 at a time (an escaped
                       character is part of the run: the quote after a backslash does not end it) */
                    const char *q = ++p;
                    while (q < e && *q != '"') q += (*q == '\\' && q + 1 < e) ? 2 : 1;
                    Py_ssize_t run = q - p;
                    hash = mix(hash, 0x22 ^ ((uint64_t)run << 8));
                    for (; run >= 8; run -= 8, p += 8) {
                        uint64_t w;
                        memcpy(&w, p, 8);
                        hash = mix(hash, w);
                    }
                    if (run) {
                        uint64_t w = 0;
                        memcpy(&w, p, (size_t)run);
                        hash = mix(hash, w);
                        p += run;
                    }
                    if (p < e) p++; /* the closing quote */
                    continue;
                }
                if (c == '-' || (c >= '0' && c <= '9')) {
                    Py_ssize_t n = number_length(p, e);
                    if (n == 0 || n >= (Py_ssize_t)sizeof token) {
                        bad = 1;
                        break;
                    }
                    double v;
                    if (!fast_number(p, n, &v)) {
                        memcpy(token, p, (size_t)n);
                        token[n] = '\0';
                        /* locale-independent, correctly rounded: the same double a JSON parser gives */
                        PyEval_RestoreThread(saved);
                        v = PyOS_string_to_double(token, NULL, NULL);
                        int failed = v == -1.0 && PyErr_Occurred();
                        if (failed) PyErr_Clear();
                        saved = PyEval_SaveThread();
                        if (failed) {
                            bad = 1;
                            break;
                        }
                    }
                    if (grow_put(&values, &v, sizeof v, &saved) < 0) {
                        no_memory = 1;
                        goto done;
                    }
                    n_values++;
                    count++;
                    hash = (hash ^ NUMBER_MARK) * FNV_PRIME;
                    p += n;
                    continue;
                }
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
            if (grow_put(&lines, row, sizeof row, &saved) < 0) {
                no_memory = 1;
                goto done;
            }
        }
        start = stop + 1;
    }
done:
    PyEval_RestoreThread(saved);
    if (no_memory) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
    } else {
        PyObject *v = grow_take(&values), *l = v ? grow_take(&lines) : NULL;
        if (v && l) out = PyTuple_Pack(2, v, l);
        Py_XDECREF(v);
        Py_XDECREF(l);
    }
    Py_XDECREF(values.obj);
    Py_XDECREF(lines.obj);
    PyBuffer_Release(&in);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(text, end, begin=0) -> (float64 values, int64 [start, end, hash, count, first] per line)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonl", NULL, -1, methods};

PyMODINIT_FUNC PyInit__jsonl(void) { return PyModule_Create(&module); }
