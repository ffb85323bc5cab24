/*
 * The poller's reader of serverStatus replies: only the fields the catalogue reads, straight
 * from the reply's BSON bytes. A full 8.x serverStatus is ~100 KB of some 3,000 fields; the
 * catalogue reads ~150 of them. Decoding the rest into Python objects (or inflating a lazy
 * document a level at a time) cost more than everything else a sample does.
 *
 * pick(raw, tree, whole) -> dict
 *   raw    a buffer holding one BSON document (the reply).
 *   tree   the fields wanted: a tuple of (key, sub) pairs, key as UTF-8 bytes; sub is a tree of
 *          the same shape to walk into that field when it is an embedded document (a field of
 *          another type is left out), or None to take the field's value whole.
 *   whole  a callable given a one-field BSON document {"v": value} for a value taken whole that
 *          is not a double, an int32/int64, a bool, a string or null (documents, arrays, dates,
 *          timestamps...); it returns the value (bson.decode(...)["v"] with the client's options).
 *   -> a dict of the wanted fields the document holds (sub-trees as dicts), values as the
 *      driver decodes them. A field that repeats is the last one (as the driver's dict).
 *   Fields not wanted are stepped over by their length, never read. Every length is checked
 *   against the document that holds it: damage raises ValueError, nothing is read out of bounds.
 *
 * Without this module (no C compiler) the poller reads replies as lazy RawBSONDocuments: the
 * same values, more CPU a sample (the tests compare both on every version's real document).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int32_t rd_i32(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
}

static int64_t rd_i64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return (int64_t)v;
}

static PyObject *damaged(Py_ssize_t at, const char *what) {
    PyErr_Format(PyExc_ValueError, "damaged BSON at byte %zd: %s", at, what);
    return NULL;
}

/* The length of the value of an element of type `type` at p (n bytes left), or -1 if it does
   not fit. */
static Py_ssize_t value_length(unsigned char type, const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t len;
    switch (type) {
    case 0x01: case 0x09: case 0x11: case 0x12: len = 8; break;
    case 0x10: len = 4; break;
    case 0x08: len = 1; break;
    case 0x07: len = 12; break;
    case 0x13: len = 16; break;
    case 0x06: case 0x0A: case 0x7F: case 0xFF: len = 0; break;
    case 0x02: case 0x0D: case 0x0E: /* int32 length (with its NUL) + bytes */
        if (n < 4) return -1;
        len = (Py_ssize_t)rd_i32(p);
        if (len < 1 || len > n - 4 || p[4 + len - 1] != 0) return -1;
        len += 4;
        break;
    case 0x03: case 0x04: case 0x0F: /* int32 total length */
        if (n < 4) return -1;
        len = (Py_ssize_t)rd_i32(p);
        if (len < 5) return -1;
        break;
    case 0x05: /* int32 length + subtype + bytes */
        if (n < 4) return -1;
        len = (Py_ssize_t)rd_i32(p);
        if (len < 0 || len > n - 5) return -1;
        len += 5;
        break;
    case 0x0C: /* string + 12-byte ObjectId */
        if (n < 4) return -1;
        len = (Py_ssize_t)rd_i32(p);
        if (len < 1 || len > n - 4) return -1;
        len += 4 + 12;
        break;
    case 0x0B: { /* two cstrings */
        const unsigned char *a = memchr(p, 0, (size_t)n);
        if (!a) return -1;
        const unsigned char *b = memchr(a + 1, 0, (size_t)(n - (a + 1 - p)));
        if (!b) return -1;
        len = (Py_ssize_t)(b + 1 - p);
        break;
    }
    default: return -1;
    }
    return len <= n ? len : -1;
}

/* The value of an element taken whole. */
static PyObject *whole_value(unsigned char type, const unsigned char *p, Py_ssize_t len, PyObject *whole) {
    switch (type) {
    case 0x01: { double d; memcpy(&d, p, 8); return PyFloat_FromDouble(d); }
    case 0x10: return PyLong_FromLong((long)rd_i32(p));
    case 0x12: return PyLong_FromLongLong((long long)rd_i64(p));
    case 0x08: return PyBool_FromLong(p[0] != 0);
    case 0x0A: Py_RETURN_NONE;
    case 0x02: return PyUnicode_DecodeUTF8((const char *)p + 4, len - 5, "strict");
    default: break;
    }
    /* {"v": value} for the driver to decode: int32 size, type, "v\0", value, NUL */
    Py_ssize_t size = 4 + 1 + 2 + len + 1;
    if (size > INT32_MAX) return damaged(0, "value too large");
    PyObject *doc = PyBytes_FromStringAndSize(NULL, size);
    if (!doc) return NULL;
    unsigned char *d = (unsigned char *)PyBytes_AS_STRING(doc);
    uint32_t s = (uint32_t)size;
    d[0] = (unsigned char)s; d[1] = (unsigned char)(s >> 8); d[2] = (unsigned char)(s >> 16); d[3] = (unsigned char)(s >> 24);
    d[4] = type; d[5] = 'v'; d[6] = 0;
    memcpy(d + 7, p, (size_t)len);
    d[size - 1] = 0;
    PyObject *value = PyObject_CallOneArg(whole, doc);
    Py_DECREF(doc);
    return value;
}

/* The wanted fields of the document at buf[at:at+n]. */
static PyObject *pick_doc(const unsigned char *buf, Py_ssize_t at, Py_ssize_t n, PyObject *tree, PyObject *whole, int depth) {
    if (depth > 100) return damaged(at, "nested too deep");
    if (n < 5) return damaged(at, "document shorter than 5 bytes");
    Py_ssize_t size = (Py_ssize_t)rd_i32(buf + at);
    if (size < 5 || size > n) return damaged(at, "document length past its end");
    if (buf[at + size - 1] != 0) return damaged(at, "document not terminated");
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    Py_ssize_t wanted = PyTuple_GET_SIZE(tree);
    Py_ssize_t pos = at + 4, end = at + size - 1;
    while (pos < end) {
        unsigned char type = buf[pos];
        const unsigned char *key = buf + pos + 1;
        const unsigned char *nul = memchr(key, 0, (size_t)(end - pos - 1));
        if (!nul) { Py_DECREF(out); return damaged(pos, "field name not terminated"); }
        Py_ssize_t key_len = (Py_ssize_t)(nul - key);
        Py_ssize_t value_at = pos + 1 + key_len + 1;
        Py_ssize_t len = value_length(type, buf + value_at, end - value_at);
        if (len < 0) { Py_DECREF(out); return damaged(pos, "field value past the document's end"); }
        for (Py_ssize_t i = 0; i < wanted; i++) {
            PyObject *pair = PyTuple_GET_ITEM(tree, i);
            PyObject *name = PyTuple_GET_ITEM(pair, 0);
            if (PyBytes_GET_SIZE(name) != key_len || memcmp(PyBytes_AS_STRING(name), key, (size_t)key_len) != 0) continue;
            PyObject *sub = PyTuple_GET_ITEM(pair, 1);
            PyObject *value;
            if (sub == Py_None) {
                value = whole_value(type, buf + value_at, len, whole);
            } else if (type == 0x03) {
                value = pick_doc(buf, value_at, len, sub, whole, depth + 1);
            } else {
                break; /* not a document: as a lookup into it finds nothing */
            }
            if (!value) { Py_DECREF(out); return NULL; }
            PyObject *text = PyUnicode_DecodeUTF8((const char *)key, key_len, "strict");
            if (!text) { Py_DECREF(value); Py_DECREF(out); return NULL; }
            int failed = PyDict_SetItem(out, text, value);
            Py_DECREF(text);
            Py_DECREF(value);
            if (failed) { Py_DECREF(out); return NULL; }
            break;
        }
        pos = value_at + len;
    }
    if (pos != end) { Py_DECREF(out); return damaged(pos, "fields past the document's end"); }
    return out;
}

static int check_tree(PyObject *tree, int depth) {
    if (depth > 100 || !PyTuple_Check(tree)) {
        PyErr_SetString(PyExc_TypeError, "tree must be a tuple of (bytes, tree or None) pairs");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tree); i++) {
        PyObject *pair = PyTuple_GET_ITEM(tree, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(pair, 0))) {
            PyErr_SetString(PyExc_TypeError, "tree must be a tuple of (bytes, tree or None) pairs");
            return -1;
        }
        PyObject *sub = PyTuple_GET_ITEM(pair, 1);
        if (sub != Py_None && check_tree(sub, depth + 1) < 0) return -1;
    }
    return 0;
}

static PyObject *pick(PyObject *self, PyObject *args) {
    Py_buffer raw;
    PyObject *tree, *whole;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*OO", &raw, &tree, &whole)) return NULL;
    PyObject *out = NULL;
    if (check_tree(tree, 0) == 0) {
        if (!PyCallable_Check(whole)) PyErr_SetString(PyExc_TypeError, "whole must be callable");
        else out = pick_doc((const unsigned char *)raw.buf, 0, raw.len, tree, whole, 0);
    }
    PyBuffer_Release(&raw);
    return out;
}

static PyMethodDef methods[] = {
    {"pick", pick, METH_VARARGS, "pick(raw, tree, whole) -> dict: the wanted fields of a BSON document."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bsonpick", NULL, -1, methods};

PyMODINIT_FUNC PyInit__bsonpick(void) { return PyModule_Create(&module); }
