/* The compiled module hpnet.ncclog._fastscan, and its counting pass.
 *
 * hpnet.ncclog.scan erases channel numbers ("Channel 03/0 :" -> "Channel :", in
 * _fasterase.c) and counts each distinct line of an 8 MiB block. In CPython that is a
 * regex substitution, a split into one bytes object per line and a Counter over them:
 * about 12 s per GB on one core (benchmarks/README.md, issue 28). Here the counting
 * hashes each line where it lies, a noise message blanked first (passes.NOISE_ERASED),
 * and counts its markers once per distinct line: a bytes object is made only for each
 * distinct line that is not dead (_fastset.c). The counting can also put a program's own
 * lines apart (count_split): most of a training log's lines besides NCCL's, each new,
 * and read only by their shapes. Most of what is left new in a large job is its
 * communicator and connection lines, read in C too (_fastread.c).
 *
 * Each function does exactly what the Python it stands for does (hpnet.ncclog.passes:
 * erased_py, erased_rings_py, count_split_py; its count_lines is count_split with no
 * program lines apart; read_comm and read_connection the readers in messages.py);
 * tests/unit/test_fastscan.py holds them to it on every recorded log and on generated
 * bytes. Built by hatch_build.py when a C compiler is there; without it the Python runs.
 */
#include "_fastbytes.h"
#include "_fasterase.h"
#include "_fastread.h"
#include "_fastset.h"

/* One distinct line (a key): where it first lies in the text (its start and its line
 * index), how often it occurs; a blanked noise line is the text's s[start:start+length]
 * followed by "-" (dash). */
typedef struct {
    Py_ssize_t start;
    Py_ssize_t length;
    Py_ssize_t count;
    Py_ssize_t first;
    Py_ssize_t markers; /* the NCCL markers its key holds ("NCCL INFO ", "NCCL WARN ") */
    uint64_t hash;
    int dash;
} Line;


/* The words that follow "NCCL INFO " in a noise message: passes.NOISE's plain
 * alternatives (tests/unit/test_fastscan.py reads them from the pattern), with their
 * lengths. */
typedef struct {
    const char *word;
    Py_ssize_t length;
} Word;
#define WORD(w) {w, sizeof w - 1}
static const Word NOISE_WORDS[] = {
    WORD("Connected to proxy"), WORD("New proxy"), WORD("Topology detection"), WORD("[Proxy"),
    WORD("ENV/Plugin"), WORD("RAS "), WORD("MNNVL"), WORD("TOPO/"), WORD("ncclTopo"),
    WORD("CPU/"), WORD("GPU/"), WORD("Pattern "), WORD("Tree "), WORD("Trees "),
    WORD("P2P Chunksize"), WORD("PROFILER/"), WORD("TUNER/"), WORD("Check P2P"),
    WORD("ncclP2p"), WORD("threadThresholds"), WORD("CC Off"), WORD("Init timings"),
    WORD("Comm config"), WORD("Could not get speed"), WORD("Setting affinity"),
    WORD("Allocated"), WORD("DMA-BUF"),
};
#define NUM_NOISE_WORDS (sizeof NOISE_WORDS / sizeof *NOISE_WORDS)

/* Does s[:n] start with "+ PCI[" and a bandwidth below 3 GB/s (a digit 0-2, ".", digits,
 * "]")? A PCIe link that slow in the topology dump is read, not noise. */
static int slow_pci(const char *s, Py_ssize_t n)
{
    if (!starts_with(s, n, "+ PCI[") || n < 10 || s[6] < '0' || s[6] > '2' || s[7] != '.')
        return 0;
    Py_ssize_t i = 8;
    if (s[i] < '0' || s[i] > '9')
        return 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i < n && s[i] == ']';
}

/* Is the message s[:n] (what follows "NCCL INFO ", to the end of its line) one that
 * passes.NOISE_ERASED blanks? Its other alternatives: "=", or a " " or "+" not before
 * spaces and "+ NVL[" (a GPU's NVLink in the topology dump) or a slow "+ PCI[" link
 * (slow_pci); "NET/" and a digit; and
 * "Channel :" with nothing after but numbers behind spaces (and a CR). */
static int is_noise(const char *s, Py_ssize_t n)
{
    if (n == 0)
        return 0;
    if (s[0] == '=')
        return 1;
    if (s[0] == ' ' || s[0] == '+') {
        Py_ssize_t i = 0;
        while (i < n && s[i] == ' ')
            i++;
        return !starts_with(s + i, n - i, "+ NVL[") && !slow_pci(s + i, n - i);
    }
    for (size_t k = 0; k < NUM_NOISE_WORDS; k++) {
        const Word *word = &NOISE_WORDS[k];
        if (word->word[0] == s[0] && n >= word->length &&
            memcmp(s, word->word, (size_t)word->length) == 0)
            return 1;
    }
    if (starts_with(s, n, "NET/"))
        return n > 4 && is_digit(s[4]);
    if (!starts_with(s, n, "Channel :"))
        return 0;
    Py_ssize_t i = 9, groups = 0;
    for (;;) {
        Py_ssize_t spaces = i;
        while (spaces < n && s[spaces] == ' ')
            spaces++;
        Py_ssize_t end = digits_end(s, spaces, n);
        if (spaces == i || end == spaces)
            break;
        i = end;
        groups++;
    }
    return groups > 0 && (i == n || (i + 1 == n && s[i] == '\r'));
}

/* The first "NCCL INFO " in s[from:n], or NULL (memchr for its first letter: a line's
 * prefix seldom holds an "N"). */
static const char *find_info(const char *s, Py_ssize_t from, Py_ssize_t n)
{
    while (n - from >= 10) {
        const char *hit = memchr(s + from, 'N', (size_t)(n - from - 9));
        if (hit == NULL)
            return NULL;
        if (memcmp(hit, "NCCL INFO ", 10) == 0)
            return hit;
        from = hit - s + 1;
    }
    return NULL;
}

/* The NCCL markers ("NCCL INFO ", "NCCL WARN ") in s[:n], as bytes.count counts each
 * (the two never overlap); *last is set when s[:n] holds "Last error:" (PyTorch's line
 * before the error NCCL returned). One pass over the bytes, for the letters that start
 * either. */
static Py_ssize_t count_markers(const char *s, Py_ssize_t n, int *last)
{
    Py_ssize_t markers = 0;
    for (Py_ssize_t i = 0; i + 10 <= n; i++) {
        if (s[i] == 'N') {
            if (s[i + 1] == 'C' && (memcmp(s + i, "NCCL INFO ", 10) == 0 ||
                                    memcmp(s + i, "NCCL WARN ", 10) == 0)) {
                markers++;
                i += 9;
            }
        }
        else if (s[i] == 'L' && s[i + 1] == 'a' && i + 11 <= n &&
                 memcmp(s + i, "Last error:", 11) == 0)
            *last = 1;
    }
    return markers;
}

/* Where NOISE_ERASED cuts the line s[:n]: after the first "NCCL INFO " that a noise
 * message follows (the line is then s[:cut] + "-"), or -1. */
static Py_ssize_t noise_cut(const char *s, Py_ssize_t n)
{
    Py_ssize_t from = 0;
    for (;;) {
        const char *hit = find_info(s, from, n);
        if (hit == NULL)
            return -1;
        Py_ssize_t cut = hit - s + 10;
        if (is_noise(s + cut, n - cut))
            return cut;
        from = hit - s + 1;
    }
}

/* Is the key at s[start:start+n] (+ "-" when dash) the bytes of line? */
static int same_key(const char *s, const Line *line, Py_ssize_t start, Py_ssize_t n, int dash)
{
    if (line->length + line->dash != n + dash)
        return 0;
    if (line->dash == dash)
        return memcmp(s + line->start, s + start, (size_t)n) == 0;
    if (line->dash) /* its bytes and "-" against a line read whole */
        return memcmp(s + line->start, s + start, (size_t)line->length) == 0 &&
               s[start + n - 1] == '-';
    return memcmp(s + line->start, s + start, (size_t)n) == 0 &&
           s[line->start + line->length - 1] == '-';
}

/* Words looked for (a tuple of non-empty bytes), with the pairs of bytes that start
 * one (a word of one byte: every pair it starts) and the bytes that are a word. */
typedef struct {
    PyObject *words;
    uint8_t pairs[65536 / 8];
    uint8_t single[256];
} Words;

static inline unsigned pair_at(const char *s) { return (uint8_t)s[0] | (unsigned)(uint8_t)s[1] << 8; }

static void words_init(Words *words, PyObject *tuple)
{
    memset(words->pairs, 0, sizeof words->pairs);
    memset(words->single, 0, sizeof words->single);
    words->words = tuple;
    for (Py_ssize_t k = 0; tuple != NULL && k < PyTuple_GET_SIZE(tuple); k++) {
        const char *w = PyBytes_AS_STRING(PyTuple_GET_ITEM(tuple, k));
        if (PyBytes_GET_SIZE(PyTuple_GET_ITEM(tuple, k)) == 1) {
            words->single[(uint8_t)w[0]] = 1;
            for (unsigned next = 0; next < 256; next++) {
                unsigned pair = (uint8_t)w[0] | next << 8;
                words->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
            }
        }
        else {
            unsigned pair = pair_at(w);
            words->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
}

/* Does s[:n] hold one of the words? One pass over its pairs of bytes: the words are
 * compared only where a pair starts one. */
static int holds_word(const char *s, Py_ssize_t n, const Words *words)
{
    if (words->words == NULL || n == 0)
        return 0;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        unsigned pair = pair_at(s + i);
        if (!(words->pairs[pair >> 3] & (1u << (pair & 7))))
            continue;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(words->words); k++) {
            PyObject *word = PyTuple_GET_ITEM(words->words, k);
            Py_ssize_t length = PyBytes_GET_SIZE(word);
            if (length <= n - i && memcmp(s + i, PyBytes_AS_STRING(word), (size_t)length) == 0)
                return 1;
        }
    }
    return words->single[(uint8_t)s[n - 1]]; /* the last byte: a pair of its own no more */
}

/* The distinct lines of a text, in the order of their first occurrence. */
typedef struct {
    Line *lines;
    Py_ssize_t used;
    Py_ssize_t number; /* lines in all */
    int last;          /* a key holds "Last error:" */
} Lines;

/* Hash every line of s[:n] into out (its lines freed by the caller), each noise line
 * blanked first when blank (as NOISE_ERASED.sub(b"NCCL INFO -", text) would: *worded is
 * set when what that takes away holds one of words); the markers of each distinct key
 * are counted once, where it first occurs. -1 and an error set when memory runs out. */
static int collect(const char *s, Py_ssize_t n, Lines *out, int blank, const Words *words,
                   int *worded)
{
    int last = 0;
    Py_ssize_t capacity = 1024, used = 0, mask = 4095;
    Line *lines = PyMem_Malloc((size_t)capacity * sizeof(Line));
    Py_ssize_t *table = PyMem_Calloc((size_t)mask + 1, sizeof(Py_ssize_t)); /* index + 1 */
    if (lines == NULL || table == NULL)
        goto nomemory;
    Py_ssize_t number = 0, pos = 0;
    while (pos < n) {
        const char *newline = memchr(s + pos, '\n', (size_t)(n - pos));
        Py_ssize_t end = newline != NULL ? newline - s : n;
        Py_ssize_t length = end - pos;
        int dash = 0;
        if (blank) {
            Py_ssize_t cut = noise_cut(s + pos, length);
            if (cut >= 0) {
                if (!*worded)
                    *worded = holds_word(s + pos + cut, length - cut, words);
                length = cut;
                dash = 1;
            }
        }
        uint64_t h = hash_key(s + pos, length, dash);
        Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)mask);
        for (;;) {
            Py_ssize_t index = table[slot];
            if (index == 0) {
                if (used == capacity) {
                    Line *grown = PyMem_Realloc(lines, (size_t)capacity * 2 * sizeof(Line));
                    if (grown == NULL)
                        goto nomemory;
                    lines = grown;
                    capacity *= 2;
                }
                Py_ssize_t markers = count_markers(s + pos, length, &last);
                lines[used] = (Line){pos, length, 1, number, markers, h, dash};
                table[slot] = ++used;
                break;
            }
            Line *line = &lines[index - 1];
            if (line->hash == h && same_key(s, line, pos, length, dash)) {
                line->count++;
                break;
            }
            slot = (slot + 1) & mask;
        }
        if (used * 2 > mask) { /* half full: twice the slots */
            Py_ssize_t bigger = mask * 2 + 1;
            Py_ssize_t *grown = PyMem_Calloc((size_t)bigger + 1, sizeof(Py_ssize_t));
            if (grown == NULL)
                goto nomemory;
            for (Py_ssize_t i = 0; i < used; i++) {
                Py_ssize_t at = (Py_ssize_t)(lines[i].hash & (uint64_t)bigger);
                while (grown[at] != 0)
                    at = (at + 1) & bigger;
                grown[at] = i + 1;
            }
            PyMem_Free(table);
            table = grown;
            mask = bigger;
        }
        number++;
        if (newline == NULL)
            break;
        pos = end + 1;
    }
    PyMem_Free(table);
    *out = (Lines){lines, used, number, last};
    return 0;
nomemory:
    PyMem_Free(lines);
    PyMem_Free(table);
    PyErr_NoMemory();
    return -1;
}

/* *obj: the bytes of one distinct line (a new reference), or NULL when it is in dead (a
 * LineSet, asked from where the line lies; a set; or None). -1 on an error. */
static int line_object(const char *s, const Line *line, PyObject *dead, PyObject **obj)
{
    if (dead != Py_None && Py_IS_TYPE(dead, &LineSetType) &&
        line_set_has(dead, line->hash, s + line->start, line->length, line->dash)) {
        *obj = NULL;
        return 0;
    }
    *obj = PyBytes_FromStringAndSize(line->dash ? NULL : s + line->start,
                                     line->length + line->dash);
    if (*obj == NULL)
        return -1;
    if (line->dash) {
        char *key = PyBytes_AS_STRING(*obj);
        memcpy(key, s + line->start, (size_t)line->length);
        key[line->length] = '-';
    }
    int skip = dead == Py_None || !PyAnySet_Check(dead) ? 0 : PySet_Contains(dead, *obj);
    if (skip != 0) {
        Py_CLEAR(*obj);
        return skip < 0 ? -1 : 0;
    }
    return 0;
}

static int set_count(PyObject *counter, PyObject *line, Py_ssize_t number)
{
    PyObject *count = PyLong_FromSsize_t(number);
    int failed = count == NULL || PyDict_SetItem(counter, line, count) < 0;
    Py_XDECREF(count);
    return failed ? -1 : 0;
}

/* A program's own line: none of the words an NCCL line, a WARN or nccl-tests' rank
 * table holds (programs.py says why these). */
static int is_program(const char *s, Py_ssize_t n, Py_ssize_t max_line)
{
    if (n > max_line)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) { /* one pass, for the letters that start a word */
        const char *at = s + i;
        Py_ssize_t left = n - i;
        if (left < 4)
            break; /* every word is longer */
        if ((*at == 'N' && at[1] == 'C' && memcmp(at, "NCCL", 4) == 0) ||
            (*at == 'n' && at[1] == 'c' && memcmp(at, "nccl", 4) == 0) ||
            (*at == '<' && at[1] == 'w' && starts_with(at, left, "<warn>")) ||
            (*at == ' ' && at[1] == 'P' && starts_with(at, left, " Pid ")))
            return 0;
    }
    return 1;
}

/* The distinct shapes of program lines (digits 1-9 made 0), joined by newlines in the
 * order of their first occurrence. */
typedef struct {
    char *text;
    Py_ssize_t size, capacity;
    Py_ssize_t *table; /* start of the shape in text + 1 */
    Py_ssize_t *lengths;
    uint64_t *hashes;
    Py_ssize_t used, mask;
} Shapes;

static int shapes_add(Shapes *shapes, const char *s, Py_ssize_t n)
{
    if (shapes->size + n + 1 > shapes->capacity) {
        Py_ssize_t want = (shapes->size + n + 1) * 2;
        char *grown = PyMem_Realloc(shapes->text, (size_t)want);
        if (grown == NULL)
            return -1;
        shapes->text = grown;
        shapes->capacity = want;
    }
    char *shape = shapes->text + shapes->size + (shapes->used > 0);
    for (Py_ssize_t i = 0; i < n; i++)
        shape[i] = s[i] >= '1' && s[i] <= '9' ? '0' : s[i];
    uint64_t h = hash_line(shape, n);
    Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)shapes->mask);
    for (;;) {
        Py_ssize_t at = shapes->table[slot];
        if (at == 0)
            break;
        if (shapes->hashes[slot] == h && shapes->lengths[slot] == n &&
            memcmp(shapes->text + at - 1, shape, (size_t)n) == 0)
            return 0; /* a shape seen before */
        slot = (slot + 1) & shapes->mask;
    }
    if (shapes->used > 0)
        shapes->text[shapes->size] = '\n';
    Py_ssize_t start = shape - shapes->text;
    shapes->size = start + n;
    shapes->table[slot] = start + 1;
    shapes->hashes[slot] = h;
    shapes->lengths[slot] = n;
    shapes->used++;
    if (shapes->used * 2 > shapes->mask) { /* half full: twice the slots */
        Py_ssize_t bigger = shapes->mask * 2 + 1;
        Py_ssize_t *table = PyMem_Calloc((size_t)bigger + 1, sizeof(Py_ssize_t));
        Py_ssize_t *lengths = PyMem_Malloc((size_t)(bigger + 1) * sizeof(Py_ssize_t));
        uint64_t *hashes = PyMem_Malloc((size_t)(bigger + 1) * sizeof(uint64_t));
        if (table == NULL || lengths == NULL || hashes == NULL) {
            PyMem_Free(table);
            PyMem_Free(lengths);
            PyMem_Free(hashes);
            return -1;
        }
        for (Py_ssize_t i = 0; i <= shapes->mask; i++) {
            if (shapes->table[i] == 0)
                continue;
            Py_ssize_t to = (Py_ssize_t)(shapes->hashes[i] & (uint64_t)bigger);
            while (table[to] != 0)
                to = (to + 1) & bigger;
            table[to] = shapes->table[i];
            lengths[to] = shapes->lengths[i];
            hashes[to] = shapes->hashes[i];
        }
        PyMem_Free(shapes->table);
        PyMem_Free(shapes->lengths);
        PyMem_Free(shapes->hashes);
        shapes->table = table;
        shapes->lengths = lengths;
        shapes->hashes = hashes;
        shapes->mask = bigger;
    }
    return 0;
}

static void shapes_free(Shapes *shapes)
{
    PyMem_Free(shapes->text);
    PyMem_Free(shapes->table);
    PyMem_Free(shapes->lengths);
    PyMem_Free(shapes->hashes);
}

/* count_split(text, counter, dead, min_programs, max_line, blank=False, words=())
 *     -> (int, int, bytes | None, list, list, int, bool, bool)
 *
 * What ``Counter(line for line in lines if line not in dead)`` puts in ``counter`` (an
 * empty dict or Counter), where ``lines`` is ``text.split(b"\n")`` less a last empty
 * piece: each line not in ``dead`` (a set, or None) with its count, in the order of its
 * first occurrence; but a program's own lines (is_program) are put apart when there are
 * at least min_programs distinct ones not in dead: they are not counted in counter;
 * their occurrences are summed, their shapes (digits 1-9 made 0) joined, distinct, in
 * the order of their first occurrence, and those that occur more than once listed. With
 * fewer, every line is counted and the shapes are None. With blank, each line is
 * counted as NOISE_ERASED.sub(b"NCCL INFO -", text) has it (dead then holds lines as
 * counted, which blanking leaves as they are: passes.count_split_py relies on it).
 * Returns (len(lines), program occurrences, shapes, repeated program lines, the index of
 * each counted line's first occurrence in counter's order, the NCCL markers of the lines
 * as counted, whether a line not in dead or what blanking took away held one of words
 * (non-empty bytes without digits, so that a program line's shape holds them as the line
 * does), whether a line as counted holds "Last error:"). */
static PyObject *count_split(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *text, *counter, *dead;
    PyObject *words = NULL;
    Py_ssize_t min_programs, max_line, markers = 0;
    int blank = 0, worded = 0;
    if (!PyArg_ParseTuple(args, "SO!Onn|pO!:count_split", &text, &PyDict_Type, &counter, &dead,
                          &min_programs, &max_line, &blank, &PyTuple_Type, &words))
        return NULL;
    for (Py_ssize_t k = 0; words != NULL && k < PyTuple_GET_SIZE(words); k++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(words, k)) ||
            PyBytes_GET_SIZE(PyTuple_GET_ITEM(words, k)) == 0) {
            PyErr_SetString(PyExc_TypeError,
                            "count_split() takes a tuple of non-empty bytes as words");
            return NULL;
        }
    if (dead != Py_None && !PyAnySet_Check(dead) && !Py_IS_TYPE(dead, &LineSetType)) {
        PyErr_SetString(PyExc_TypeError, "count_split() takes a LineSet, a set or None as dead");
        return NULL;
    }
    const char *s = PyBytes_AS_STRING(text);
    Words wanted;
    words_init(&wanted, words);
    Lines found;
    if (collect(s, PyBytes_GET_SIZE(text), &found, blank, &wanted, &worded) < 0)
        return NULL;
    PyObject **objects = PyMem_Calloc((size_t)found.used + 1, sizeof(PyObject *));
    char *program = PyMem_Calloc((size_t)found.used + 1, 1);
    PyObject *repeats = PyList_New(0);
    PyObject *firsts = PyList_New(0);
    PyObject *joined = NULL;
    Shapes shapes = {0};
    Py_ssize_t programs = 0, total = 0;
    if (objects == NULL || program == NULL || repeats == NULL || firsts == NULL) {
        if (repeats != NULL && firsts != NULL)
            PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < found.used; i++) {
        const Line *line = &found.lines[i];
        markers += line->markers * line->count;
        if (line_object(s, line, dead, &objects[i]) < 0)
            goto fail;
        if (objects[i] != NULL && !worded)
            worded = holds_word(PyBytes_AS_STRING(objects[i]), PyBytes_GET_SIZE(objects[i]),
                                &wanted);
        if (objects[i] != NULL && min_programs <= found.used &&
            is_program(s + line->start, line->length, max_line)) {
            program[i] = 1;
            programs++;
        }
    }
    int apart = programs >= min_programs && programs > 0;
    if (apart) {
        shapes.mask = 255;
        shapes.table = PyMem_Calloc(256, sizeof(Py_ssize_t));
        shapes.lengths = PyMem_Malloc(256 * sizeof(Py_ssize_t));
        shapes.hashes = PyMem_Malloc(256 * sizeof(uint64_t));
        if (shapes.table == NULL || shapes.lengths == NULL || shapes.hashes == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    for (Py_ssize_t i = 0; i < found.used; i++) {
        const Line *line = &found.lines[i];
        if (objects[i] == NULL)
            continue;
        if (apart && program[i]) {
            total += line->count;
            if (line->count > 1 && PyList_Append(repeats, objects[i]) < 0)
                goto fail;
            if (shapes_add(&shapes, s + line->start, line->length) < 0) {
                PyErr_NoMemory();
                goto fail;
            }
        }
        else {
            PyObject *first = PyLong_FromSsize_t(line->first);
            int failed = first == NULL || PyList_Append(firsts, first) < 0;
            Py_XDECREF(first);
            if (failed || set_count(counter, objects[i], line->count) < 0)
                goto fail;
        }
    }
    if (apart) {
        joined = PyBytes_FromStringAndSize(shapes.text, shapes.size);
        if (joined == NULL)
            goto fail;
    }
    else {
        joined = Py_None;
        Py_INCREF(joined);
    }
    for (Py_ssize_t i = 0; i < found.used; i++)
        Py_XDECREF(objects[i]);
    PyMem_Free(objects);
    PyMem_Free(program);
    PyMem_Free(found.lines);
    shapes_free(&shapes);
    return Py_BuildValue("nnNNNnOO", found.number, total, joined, repeats, firsts, markers,
                         worded ? Py_True : Py_False, found.last ? Py_True : Py_False);
fail:
    if (objects != NULL)
        for (Py_ssize_t i = 0; i < found.used; i++)
            Py_XDECREF(objects[i]);
    PyMem_Free(objects);
    PyMem_Free(program);
    PyMem_Free(found.lines);
    shapes_free(&shapes);
    Py_XDECREF(repeats);
    Py_XDECREF(firsts);
    return NULL;
}

static PyMethodDef methods[] = {
    {"erase_channels", erase_channels, METH_O,
     "data with every 'Channel <n>/<m> :' made 'Channel :', or None when it holds a "
     "'Channel <n> :'."},
    {"erase_rings", erase_rings, METH_O,
     "data with every 'INFO Ring <n> :' made 'INFO Ring :' (data itself when none is)."},
    {"count_split", count_split, METH_VARARGS,
     "Count text's lines not in dead into counter (noise blanked with blank), a program's "
     "own lines apart: (lines, their occurrences, their distinct shapes joined or None, "
     "those repeated, each counted line's first index, the markers of the lines as counted, "
     "whether a line not dead or what blanking took away held a word, whether a line "
     "holds 'Last error:')."},
    {"read_comm", read_comm, METH_O,
     "The data of a communicator line's reading (what, state, fields), or None."},
    {"read_connection", read_connection, METH_O,
     "The data of a connection line's reading (source, its device, destination, its "
     "device, direction, transport), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastscan", "The scanner's passes over every byte, compiled.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastscan(void)
{
    if (PyType_Ready(&LineSetType) < 0)
        return NULL;
    PyObject *made = PyModule_Create(&module);
    if (made == NULL)
        return NULL;
    Py_INCREF(&LineSetType);
    if (PyModule_AddObject(made, "LineSet", (PyObject *)&LineSetType) < 0) {
        Py_DECREF(&LineSetType);
        Py_DECREF(made);
        return NULL;
    }
    return made;
}
