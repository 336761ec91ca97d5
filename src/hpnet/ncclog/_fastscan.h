/* What the compiled module's two files share (hpnet.ncclog._fastscan: the passes over
 * every byte in _fastscan.c, the readers of a large job's commonest new lines in
 * _fastread.c): the small byte tests both use, and the readers the module exports. */
#ifndef HPNET_FASTSCAN_H
#define HPNET_FASTSCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The end of the digits starting at i (i itself when there are none). */
static inline Py_ssize_t digits_end(const char *s, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && is_digit(s[i]))
        i++;
    return i;
}

static inline int starts_with(const char *s, Py_ssize_t n, const char *word)
{
    size_t length = strlen(word);
    return (size_t)n >= length && memcmp(s, word, length) == 0;
}

/* _fastread.c: read_comm(message) and read_connection(message), METH_O. */
PyObject *read_comm(PyObject *module, PyObject *arg);
PyObject *read_connection(PyObject *module, PyObject *arg);

#endif
