/* What _fastset.c gives the module: the scanner's set of dead lines (LineSet), and
 * whether a line, hashed where it lies, is among them. */
#ifndef HPNET_FASTSET_H
#define HPNET_FASTSET_H

#include "_fastbytes.h"

extern PyTypeObject LineSetType;
int line_set_has(PyObject *set, uint64_t hash, const char *s, Py_ssize_t n, int dash);

#endif
