/* The small byte tests and the line hash every file of the compiled module uses
 * (hpnet.ncclog._fastscan: its module and counting pass in _fastscan.c, the erasers in
 * _fasterase.c, the readers in _fastread.c, the set of dead lines in _fastset.c). */
#ifndef HPNET_FASTBYTES_H
#define HPNET_FASTBYTES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
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

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    return h ^ (h >> 32);
}

/* The hash of s[:n], followed by "-" when dash: a blanked line's key is hashed as the
 * bytes it stands for, so that it is one key with the same bytes read from the input. */
static inline uint64_t hash_key(const char *s, Py_ssize_t n, int dash)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)(n + dash);
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = mix(h, w);
    }
    char tail[8] = {0}; /* the last bytes, at most 7, and the dash */
    Py_ssize_t rest = n - i;
    memcpy(tail, s + i, (size_t)rest);
    if (dash)
        tail[rest++] = '-';
    uint64_t w = 0;
    memcpy(&w, tail, 8);
    if (rest == 8) { /* the dash filled a word */
        h = mix(h, w);
        w = 0;
    }
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

static inline uint64_t hash_line(const char *s, Py_ssize_t n) { return hash_key(s, n, 0); }

#endif
