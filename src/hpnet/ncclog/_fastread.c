/* The readers of a large job's commonest new lines, compiled (part of
 * hpnet.ncclog._fastscan, whose module and counting pass are in _fastscan.c).
 *
 * A long job's communicators are new by their addresses, and a large job's connection
 * lines by its ranks: most of what its log says anew is these two kinds of line, each
 * read once, in Python at 10 to 20 us a line (benchmarks/README.md, issue 28 steps 6
 * and 8). Each reader here returns exactly the data messages.read_message gives a line
 * of the plain form it knows, and None for anything else, which the Python readers then
 * read; tests/unit/test_fastscan.py holds the two to the same data on every recorded
 * log and on generated messages.
 */
#include "_fastread.h"

/* The names of messages.py's _FIELDS: hex values, then decimal ones. */
static const char *const HEX_NAMES[] = {"comm", "busId", "commId", "commHash", "parent"};
static const char *const DECIMAL_NAMES[] = {
    "rank", "nranks", "nRanks", "cudaDev", "nvmlDev", "nNodes", "localRanks", "color", "MNNVL",
};
#define NUM_HEX (sizeof HEX_NAMES / sizeof *HEX_NAMES)
#define NUM_DECIMAL (sizeof DECIMAL_NAMES / sizeof *DECIMAL_NAMES)
#define MAX_TOKENS 64

typedef struct {
    const char *at;
    Py_ssize_t length;
} Token;

static int token_is(const Token *token, const char *word)
{
    size_t n = strlen(word);
    return (size_t)token->length == n && memcmp(token->at, word, n) == 0;
}

static int is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* The message as tokens, when it is one that _FIELDS' word boundaries cut exactly at
 * its single spaces: ASCII letters and digits, a "-" alone or before digits. -1 else. */
static Py_ssize_t tokens_of(const char *s, Py_ssize_t n, Token *tokens)
{
    Py_ssize_t count = 0, start = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ' ') {
            if (!is_alnum(s[i]) && !(s[i] == '-' && i == start))
                return -1;
            if (s[i] != '-' && i > start && s[start] == '-' && !is_digit(s[i]))
                return -1; /* "-" before anything but digits */
            continue;
        }
        if (i == start || count == MAX_TOKENS)
            return -1; /* two spaces, a space at an end, or too many words */
        tokens[count++] = (Token){s + start, i - start};
        start = i + 1;
    }
    return count;
}

static int all_of(const Token *token, Py_ssize_t from, int (*fits)(char))
{
    if (token->length <= from)
        return 0;
    for (Py_ssize_t i = from; i < token->length; i++)
        if (!fits(token->at[i]))
            return 0;
    return 1;
}

/* What _fields(message) holds, for a message of tokens: each known name followed by a
 * value of its form, the first value of each name, in the order found. */
static PyObject *fields_of(const Token *tokens, Py_ssize_t count)
{
    PyObject *found = PyDict_New();
    if (found == NULL)
        return NULL;
    Py_ssize_t i = 0;
    while (i + 1 < count) {
        const Token *name = &tokens[i], *value = &tokens[i + 1];
        const char *matched = NULL;
        for (size_t k = 0; k < NUM_HEX && matched == NULL; k++)
            if (token_is(name, HEX_NAMES[k]) &&
                (all_of(value, 0, is_hex) ||
                 (value->length > 2 && value->at[0] == '0' && value->at[1] == 'x' &&
                  all_of(value, 2, is_hex))))
                matched = HEX_NAMES[k];
        for (size_t k = 0; k < NUM_DECIMAL && matched == NULL; k++)
            if (token_is(name, DECIMAL_NAMES[k]) &&
                all_of(value, value->length > 0 && value->at[0] == '-', is_digit))
                matched = DECIMAL_NAMES[k];
        if (matched == NULL) {
            i++;
            continue;
        }
        PyObject *key = PyUnicode_FromString(matched);
        PyObject *text = PyUnicode_FromStringAndSize(value->at, value->length);
        int failed = key == NULL || text == NULL || PyDict_SetDefault(found, key, text) == NULL;
        Py_XDECREF(key);
        Py_XDECREF(text);
        if (failed) {
            Py_DECREF(found);
            return NULL;
        }
        i += 2;
    }
    return found;
}

static int holds(const char *s, Py_ssize_t n, const char *word)
{
    return memmem(s, (size_t)n, word, strlen(word)) != NULL;
}

/* read_comm(message) -> (what, state, fields) | None
 *
 * What messages.read_message reads from a communicator line ("ncclCommInitRank comm
 * 0x55d0 rank 3 nranks 8 ... - Init START", "comm 0x55d0 rank 3 nRanks 8 ..."): the
 * data of its "comm" reading, for a message (bytes, what follows "NCCL INFO ") that is
 * plain words (tokens_of) and starts with "ncclComm" or "comm 0x". None where it is not
 * such a line, or its reading needs the Python readers: they read it then. */
PyObject *read_comm(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "read_comm() takes bytes");
        return NULL;
    }
    const char *s = PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    int info = n >= 7 && memcmp(s, "comm 0x", 7) == 0;
    if (!info && !(n >= 8 && memcmp(s, "ncclComm", 8) == 0))
        Py_RETURN_NONE;
    Token tokens[MAX_TOKENS];
    Py_ssize_t count = tokens_of(s, n, tokens);
    if (count < 0 || holds(s, n, "NCCL INFO ") || holds(s, n, "NCCL WARN "))
        Py_RETURN_NONE;
    PyObject *fields = NULL, *rank = NULL;
    if (holds(s, n, "Init START") || holds(s, n, "Init COMPLETE") || holds(s, n, "- Abort") ||
        holds(s, n, "- Destroy")) {
        static const char *const WHATS[] = {"Init", "Abort", "Destroy"};
        static const char *const STATES[] = {"START", "COMPLETE"};
        const char *what = NULL, *state = NULL;
        for (Py_ssize_t i = 0; i + 2 < count && what == NULL; i++) {
            if (!token_is(&tokens[i], "-"))
                continue;
            for (size_t w = 0; w < 3 && what == NULL; w++) {
                if (!token_is(&tokens[i + 1], WHATS[w]))
                    continue;
                for (size_t k = 0; k < 2 && state == NULL; k++) {
                    size_t length = strlen(STATES[k]);
                    if ((size_t)tokens[i + 2].length >= length &&
                        memcmp(tokens[i + 2].at, STATES[k], length) == 0)
                        state = STATES[k];
                }
                if (state != NULL)
                    what = WHATS[w];
            }
        }
        fields = fields_of(tokens, count);
        if (fields == NULL)
            return NULL;
        rank = PyDict_GetItemString(fields, "rank");
        if (what != NULL && rank != NULL)
            return Py_BuildValue("(ssN)", what, state, fields);
        Py_DECREF(fields);
    }
    if (info && (holds(s, n, "nRanks") || holds(s, n, "nranks"))) {
        fields = fields_of(tokens, count);
        if (fields == NULL)
            return NULL;
        if (PyDict_GetItemString(fields, "rank") != NULL)
            return Py_BuildValue("(ssN)", "Info", "", fields);
        Py_DECREF(fields);
    }
    Py_RETURN_NONE;
}

/* The end of the digits at s[i:] (at most 18 of them, i itself when none or more). */
static Py_ssize_t number_end(const char *s, Py_ssize_t i, Py_ssize_t n)
{
    Py_ssize_t end = digits_end(s, i, n);
    return end - i > 18 ? i : end;
}

/* A rank and its optional "[device]" at s[*at:]: the rank (or -1 when there is none) and
 * the device as text (NULL when absent); *at moves past them. */
static long long rank_at(const char *s, Py_ssize_t n, Py_ssize_t *at, const char **device,
                         Py_ssize_t *device_length)
{
    Py_ssize_t start = *at, end = number_end(s, start, n);
    if (end == start)
        return -1;
    long long rank = 0;
    for (Py_ssize_t i = start; i < end; i++)
        rank = rank * 10 + (s[i] - '0');
    *device = NULL;
    *device_length = 0;
    if (end < n && s[end] == '[') {
        Py_ssize_t i = end + 1;
        while (i < n && (is_hex(s[i]) || s[i] == 'x'))
            i++;
        if (i == end + 1 || i >= n || s[i] != ']')
            return -1;
        *device = s + end + 1;
        *device_length = i - end - 1;
        end = i + 1;
    }
    *at = end;
    return rank;
}

static int is_via(char c) { return is_alnum(c) || c == '/' || c == '_' || c == '.' || c == '-'; }

/* read_connection(message) -> (int, str, int, str, str | None, str) | None
 *
 * What messages.read_message reads from a connection line ("Channel : 0[0] -> 1[1] via
 * P2P/CUMEM", "Channel 02/0 : 3[3] -> 4[0] [send] via NET/IB/0/GDRDMA"): the data of its
 * "connection" reading (source rank, its device, destination rank, its device, "send",
 * "receive" or None, the transport), for a message (bytes, what follows "NCCL INFO ")
 * of exactly that form, single spaces and a transport of letters, digits and "/_.-"
 * only. None otherwise: the Python readers read it then. */
PyObject *read_connection(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "read_connection() takes bytes");
        return NULL;
    }
    const char *s = PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg), at;
    if (starts_with(s, n, "Channel"))
        at = 7;
    else if (starts_with(s, n, "Ring"))
        at = 4;
    else
        Py_RETURN_NONE;
    if (at < n && s[at] == ' ' && at + 1 < n && is_digit(s[at + 1])) { /* a channel number */
        at = number_end(s, at + 1, n);
        if (at < n && s[at] == '/') {
            Py_ssize_t end = number_end(s, at + 1, n);
            if (end == at + 1)
                Py_RETURN_NONE;
            at = end;
        }
    }
    if (!starts_with(s + at, n - at, " : "))
        Py_RETURN_NONE;
    at += 3;
    const char *src_device, *dst_device;
    Py_ssize_t src_length, dst_length;
    long long src = rank_at(s, n, &at, &src_device, &src_length);
    if (src < 0 || !starts_with(s + at, n - at, " -> "))
        Py_RETURN_NONE;
    at += 4;
    long long dst = rank_at(s, n, &at, &dst_device, &dst_length);
    if (dst < 0)
        Py_RETURN_NONE;
    const char *direction = NULL;
    if (starts_with(s + at, n - at, " [send]")) {
        direction = "send";
        at += 7;
    }
    else if (starts_with(s + at, n - at, " [receive]")) {
        direction = "receive";
        at += 10;
    }
    if (!starts_with(s + at, n - at, " via ") || at + 5 == n)
        Py_RETURN_NONE;
    at += 5;
    for (Py_ssize_t i = at; i < n; i++)
        if (!is_via(s[i]))
            Py_RETURN_NONE;
    return Py_BuildValue("(Ls#Ls#zs#)", src, src_device ? src_device : "", src_length, dst,
                         dst_device ? dst_device : "", dst_length, direction, s + at, n - at);
}
