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
#include "_fastset.h"

/* A slot: a line (bytes) and its hash, or NULL in an empty slot. */
typedef struct {
    PyObject *key;
    uint64_t hash;
} Slot;

typedef struct {
    PyObject_HEAD
    Slot *slots;
    Py_ssize_t mask; /* slots - 1 (slots: a power of two) */
    Py_ssize_t used;
} LineSet;

static int line_set_alloc(LineSet *set, Py_ssize_t slots)
{
    set->slots = PyMem_Calloc((size_t)slots, sizeof(Slot));
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    set->mask = slots - 1;
    set->used = 0;
    return 0;
}

static void line_set_release(LineSet *set)
{
    for (Py_ssize_t i = 0; set->slots != NULL && i <= set->mask; i++)
        Py_XDECREF(set->slots[i].key);
    PyMem_Free(set->slots);
    set->slots = NULL;
}

/* The slot of the key s[:n] (+ "-" when dash) under hash: where it is, or the empty
 * slot where it would go. */
static Py_ssize_t line_set_slot(const LineSet *set, uint64_t hash, const char *s,
                                Py_ssize_t n, int dash)
{
    Py_ssize_t slot = (Py_ssize_t)(hash & (uint64_t)set->mask);
    for (;;) {
        PyObject *key = set->slots[slot].key;
        if (key == NULL)
            return slot;
        if (set->slots[slot].hash == hash && PyBytes_GET_SIZE(key) == n + dash) {
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
    return set->slots[line_set_slot(set, hash, s, n, dash)].key != NULL;
}

static int line_set_grow(LineSet *set)
{
    LineSet bigger;
    if (line_set_alloc(&bigger, (set->mask + 1) * 2) < 0)
        return -1;
    for (Py_ssize_t i = 0; i <= set->mask; i++) {
        Slot old = set->slots[i];
        if (old.key == NULL)
            continue;
        Py_ssize_t slot = (Py_ssize_t)(old.hash & (uint64_t)bigger.mask);
        while (bigger.slots[slot].key != NULL)
            slot = (slot + 1) & bigger.mask;
        bigger.slots[slot] = old; /* the reference moves */
    }
    PyMem_Free(set->slots);
    set->slots = bigger.slots;
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
    if (set->slots[slot].key != NULL)
        return 0;
    Py_INCREF(key);
    set->slots[slot] = (Slot){key, hash};
    set->used++;
    /* at most two thirds full, as a Python set */
    return set->used * 3 > set->mask * 2 ? line_set_grow(set) : 0;
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
