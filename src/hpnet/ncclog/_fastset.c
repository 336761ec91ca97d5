/* The scanner's dead lines, as a set count_split can ask without making a bytes object.
 *
 * Most of a large job's block is lines the scanner has read before and found to say
 * nothing new (ScanState.dead): count_split hashes each distinct line where it lies,
 * and asked a Python set whether it is dead only after making a bytes object of it and
 * hashing it again (SipHash), to throw most of them away. A LineSet holds the same bytes
 * under count_split's own hash (hash_key): a dead line is found from where it lies.
 * From Python it is a set of bytes with add, update, clear, len and in; passes.py uses
 * a plain set where the module is not built.
 */
#include "_fastscan.h"

typedef struct {
    PyObject_HEAD
    PyObject **keys; /* bytes, or NULL in an empty slot */
    uint64_t *hashes;
    Py_ssize_t mask; /* slots - 1 (slots: a power of two) */
    Py_ssize_t used;
} LineSet;

static int line_set_alloc(LineSet *set, Py_ssize_t slots)
{
    set->keys = PyMem_Calloc((size_t)slots, sizeof(PyObject *));
    set->hashes = PyMem_Malloc((size_t)slots * sizeof(uint64_t));
    if (set->keys == NULL || set->hashes == NULL) {
        PyMem_Free(set->keys);
        PyMem_Free(set->hashes);
        set->keys = NULL;
        set->hashes = NULL;
        PyErr_NoMemory();
        return -1;
    }
    set->mask = slots - 1;
    set->used = 0;
    return 0;
}

static void line_set_release(LineSet *set)
{
    for (Py_ssize_t i = 0; set->keys != NULL && i <= set->mask; i++)
        Py_XDECREF(set->keys[i]);
    PyMem_Free(set->keys);
    PyMem_Free(set->hashes);
    set->keys = NULL;
    set->hashes = NULL;
}

/* The slot of the key s[:n] (+ "-" when dash) under hash: where it is, or the empty
 * slot where it would go. */
static Py_ssize_t line_set_slot(const LineSet *set, uint64_t hash, const char *s,
                                Py_ssize_t n, int dash)
{
    Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)set->mask);
    for (;;) {
        PyObject *key = set->keys[slot];
        if (key == NULL)
            return slot;
        if (set->hashes[slot] == hash && PyBytes_GET_SIZE(key) == n + dash) {
            const char *bytes = PyBytes_AS_STRING(key);
            if (memcmp(bytes, s, (size_t)n) == 0 && (!dash || bytes[n] == '-'))
                return slot;
        }
        slot = (slot + 1) & set->mask;
    }
}

int line_set_has(PyObject *object, uint64_t hash, const char *s, Py_ssize_t n, int dash)
{
    const LineSet *set = (const LineSet *)object;
    return set->keys[line_set_slot(set, hash, s, n, dash)] != NULL;
}

static int line_set_grow(LineSet *set)
{
    LineSet bigger;
    if (line_set_alloc(&bigger, (set->mask + 1) * 2) < 0)
        return -1;
    for (Py_ssize_t i = 0; i <= set->mask; i++) {
        PyObject *key = set->keys[i];
        if (key == NULL)
            continue;
        Py_ssize_t slot = (Py_ssize_t)(set->hashes[i] & (uint64_t)bigger.mask);
        while (bigger.keys[slot] != NULL)
            slot = (slot + 1) & bigger.mask;
        bigger.keys[slot] = key; /* the reference moves */
        bigger.hashes[slot] = set->hashes[i];
    }
    PyMem_Free(set->keys);
    PyMem_Free(set->hashes);
    set->keys = bigger.keys;
    set->hashes = bigger.hashes;
    set->mask = bigger.mask;
    return 0;
}

static int line_set_add_one(LineSet *set, PyObject *key)
{
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "a LineSet holds bytes");
        return -1;
    }
    const char *s = PyBytes_AS_STRING(key);
    Py_ssize_t n = PyBytes_GET_SIZE(key);
    uint64_t hash = hash_line(s, n);
    Py_ssize_t slot = line_set_slot(set, hash, s, n, 0);
    if (set->keys[slot] != NULL)
        return 0;
    Py_INCREF(key);
    set->keys[slot] = key;
    set->hashes[slot] = hash;
    set->used++;
    return set->used * 2 > set->mask ? line_set_grow(set) : 0;
}

static PyObject *line_set_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "LineSet() takes no arguments");
        return NULL;
    }
    LineSet *set = (LineSet *)type->tp_alloc(type, 0);
    if (set != NULL && line_set_alloc(set, 1024) < 0)
        Py_CLEAR(set);
    return (PyObject *)set;
}

static void line_set_dealloc(LineSet *set)
{
    line_set_release(set);
    Py_TYPE(set)->tp_free((PyObject *)set);
}

static PyObject *line_set_add(LineSet *set, PyObject *key)
{
    if (line_set_add_one(set, key) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *line_set_update(LineSet *set, PyObject *keys)
{
    PyObject *iterator = PyObject_GetIter(keys);
    if (iterator == NULL)
        return NULL;
    PyObject *key;
    while ((key = PyIter_Next(iterator)) != NULL) {
        int failed = line_set_add_one(set, key);
        Py_DECREF(key);
        if (failed < 0) {
            Py_DECREF(iterator);
            return NULL;
        }
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *line_set_clear(LineSet *set, PyObject *unused)
{
    (void)unused;
    line_set_release(set);
    if (line_set_alloc(set, 1024) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static Py_ssize_t line_set_len(LineSet *set) { return set->used; }

static int line_set_contains(LineSet *set, PyObject *key)
{
    if (!PyBytes_Check(key))
        return 0;
    const char *s = PyBytes_AS_STRING(key);
    Py_ssize_t n = PyBytes_GET_SIZE(key);
    return line_set_has((PyObject *)set, hash_line(s, n), s, n, 0);
}

static PyMethodDef line_set_methods[] = {
    {"add", (PyCFunction)line_set_add, METH_O, "Add a line (bytes)."},
    {"update", (PyCFunction)line_set_update, METH_O, "Add each line of an iterable."},
    {"clear", (PyCFunction)line_set_clear, METH_NOARGS, "Forget every line."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods line_set_sequence = {
    .sq_length = (lenfunc)line_set_len,
    .sq_contains = (objobjproc)line_set_contains,
};

PyTypeObject LineSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hpnet.ncclog._fastscan.LineSet",
    .tp_basicsize = sizeof(LineSet),
    .tp_dealloc = (destructor)line_set_dealloc,
    .tp_as_sequence = &line_set_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of lines (bytes) that count_split asks without making bytes objects.",
    .tp_methods = line_set_methods,
    .tp_new = line_set_new,
};
