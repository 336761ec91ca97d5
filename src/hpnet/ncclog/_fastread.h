/* What _fastread.c gives the module: the readers of a large job's commonest new lines
 * (communicator and connection lines), METH_O functions. */
#ifndef HPNET_FASTREAD_H
#define HPNET_FASTREAD_H

#include "_fastbytes.h"

PyObject *read_comm(PyObject *module, PyObject *arg);
PyObject *read_connection(PyObject *module, PyObject *arg);

#endif
