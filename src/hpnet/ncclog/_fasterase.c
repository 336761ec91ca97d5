/* The erasers of the scanner's first pass (hpnet.ncclog.passes.erased): channel
 * numbers ("Channel 03/0 :" -> "Channel :") and ring numbers ("INFO Ring 12 :" ->
 * "INFO Ring :"), so that the lines of one connection on every channel become one line.
 * Each does what its regex substitution does (passes.erased_py, erased_rings_py;
 * tests/unit/test_fastscan.py holds them to it), in one pass that finds the numbers and
 * one copy at the text's final size. */
#include "_fasterase.h"

static const char CHANNEL[] = "Channel ";
#define CHANNEL_LEN 8


/* Where an eraser cuts a text: each number it erases, src[first:resume] made ":". */
typedef struct {
    Py_ssize_t *cuts; /* first, resume, first, resume, ... */
    Py_ssize_t used, capacity;
} Cuts;

static int cuts_add(Cuts *cuts, Py_ssize_t first, Py_ssize_t resume)
{
    if (cuts->used + 2 > cuts->capacity) {
        Py_ssize_t want = cuts->capacity ? cuts->capacity * 2 : 1024;
        Py_ssize_t *grown = PyMem_Realloc(cuts->cuts, (size_t)want * sizeof(Py_ssize_t));
        if (grown == NULL) {
            PyMem_Free(cuts->cuts);
            PyErr_NoMemory();
            return -1;
        }
        cuts->cuts = grown;
        cuts->capacity = want;
    }
    cuts->cuts[cuts->used++] = first;
    cuts->cuts[cuts->used++] = resume;
    return 0;
}

/* The text with its cuts made (arg itself when there are none), made at its final size
 * at once: a block made at the input's size and shrunk afterwards fragmented the heap,
 * and a worker's peak memory grew with its range. Frees the cuts. */
static PyObject *cut_text(PyObject *arg, Cuts *cuts)
{
    if (cuts->used == 0) {
        PyMem_Free(cuts->cuts);
        Py_INCREF(arg);
        return arg;
    }
    const char *src = PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg), size = n;
    for (Py_ssize_t k = 0; k < cuts->used; k += 2)
        size -= cuts->cuts[k + 1] - cuts->cuts[k] - 1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out != NULL) {
        char *dst = PyBytes_AS_STRING(out);
        Py_ssize_t copied = 0; /* src[copied:] is not in out yet */
        for (Py_ssize_t k = 0; k < cuts->used; k += 2) {
            memcpy(dst, src + copied, (size_t)(cuts->cuts[k] - copied));
            dst += cuts->cuts[k] - copied;
            *dst++ = ':';
            copied = cuts->cuts[k + 1];
        }
        memcpy(dst, src + copied, (size_t)(n - copied));
    }
    PyMem_Free(cuts->cuts);
    return out;
}

/* Where a number after a word ends, as an eraser reads it: the offset after its " :"
 * (the cut ends there), NO_CUT where the text there is no such number, or BARE where it
 * is a form the eraser cannot take (the caller then returns None). */
#define NO_CUT ((Py_ssize_t)-1)
#define BARE ((Py_ssize_t)-2)
typedef Py_ssize_t (*NumberEnd)(const char *src, Py_ssize_t first, Py_ssize_t n);

/* "<digits> :" */
static Py_ssize_t ring_end(const char *src, Py_ssize_t first, Py_ssize_t n)
{
    Py_ssize_t end = digits_end(src, first, n);
    if (end == first || end + 1 >= n || src[end] != ' ' || src[end + 1] != ':')
        return NO_CUT;
    return end + 2;
}

/* "<digits>/<digits> :"; "<digits> :" without "/" is BARE */
static Py_ssize_t channel_end(const char *src, Py_ssize_t first, Py_ssize_t n)
{
    Py_ssize_t end = digits_end(src, first, n);
    if (end == first)
        return NO_CUT;
    if (end < n && src[end] == '/') {
        Py_ssize_t second = end + 1;
        Py_ssize_t stop = digits_end(src, second, n);
        if (stop == second || stop + 1 >= n || src[stop] != ' ' || src[stop + 1] != ':')
            return NO_CUT;
        return stop + 2;
    }
    return end + 1 < n && src[end] == ' ' && src[end + 1] == ':' ? BARE : NO_CUT;
}

/* arg with the number after each word made ":" (left to right, as re.sub), or None
 * where number_end finds a BARE form; name is the caller's, for its error. */
static PyObject *erase_numbers(PyObject *arg, const char *word, Py_ssize_t word_len,
                               NumberEnd number_end, const char *name)
{
    if (!PyBytes_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s() takes bytes", name);
        return NULL;
    }
    const char *src = PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    Cuts cuts = {0};
    Py_ssize_t search = 0;
    while (search < n) {
        const char *hit = memmem(src + search, (size_t)(n - search), word, (size_t)word_len);
        if (hit == NULL)
            break;
        Py_ssize_t first = hit - src + word_len;
        Py_ssize_t resume = number_end(src, first, n);
        if (resume == BARE) {
            PyMem_Free(cuts.cuts);
            Py_RETURN_NONE;
        }
        if (resume == NO_CUT) {
            search = hit - src + 1;
            continue;
        }
        if (cuts_add(&cuts, first, resume) < 0)
            return NULL;
        search = resume;
    }
    return cut_text(arg, &cuts);
}

/* erase_channels(data) -> bytes | None
 *
 * ``data`` with every "Channel <digits>/<digits> :" made "Channel :" (the regex
 * rb"Channel \d+/\d+ :" substituted left to right), or None when ``data`` holds a
 * "Channel <digits> :" without "/" (older releases' ring-order lines: the caller blanks
 * noise first, in Python). */
PyObject *erase_channels(PyObject *module, PyObject *arg)
{
    (void)module;
    return erase_numbers(arg, CHANNEL, CHANNEL_LEN, channel_end, "erase_channels");
}

static const char RING[] = "INFO Ring ";
#define RING_LEN 10

/* erase_rings(data) -> bytes
 *
 * ``data`` with every "INFO Ring <digits> :" made "INFO Ring :" (the regex
 * rb"INFO Ring \d+ :" substituted left to right: the ring lines of NCCL's graph
 * search, and NCCL 2.4-2.6's channels), ``data`` itself when it holds none. */
PyObject *erase_rings(PyObject *module, PyObject *arg)
{
    (void)module;
    return erase_numbers(arg, RING, RING_LEN, ring_end, "erase_rings");
}
