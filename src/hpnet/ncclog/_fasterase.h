/* What _fasterase.c gives the module: the erasers of channel and ring numbers, METH_O
 * functions. */
#ifndef HPNET_FASTERASE_H
#define HPNET_FASTERASE_H

#include "_fastbytes.h"

PyObject *erase_channels(PyObject *module, PyObject *arg);
PyObject *erase_rings(PyObject *module, PyObject *arg);

#endif
