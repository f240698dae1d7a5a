/* Growable column buffers and their export as Arrow C data (the Arrow PyCapsule interface). */
#ifndef DGTRACE_SCANNER_ARROW_H
#define DGTRACE_SCANNER_ARROW_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the appends run once a value, millions of times a chunk: inlined into the scan */
#if defined(__GNUC__) || defined(__clang__)
#define SCANNER_INLINE static inline __attribute__((always_inline))
#else
#define SCANNER_INLINE static inline
#endif

#define INTERN_SLOTS 256
#define INLINE_VIEW 12

/* bytes that grow by doubling; `p` is NULL until the first byte */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} Buf;


/* column types: Int64, Datetime(us) without zone, Int32 with nulls, Int8, UInt8, String (Arrow string view) */
enum { COL_I64, COL_TS, COL_I32N, COL_I8, COL_U8, COL_STR };

typedef struct {
    const char *name; /* static */
    int type;
} Column;

#define MAX_COLUMNS 6

typedef struct {
    uint32_t offset, length;
} Interned;

typedef struct {
    Column spec;
    Buf values;   /* fixed-width values, or 16-byte views */
    Buf validity; /* COL_I32N: one bit a row */
    Buf data;     /* COL_STR: the bytes of strings longer than 12, each distinct one once in a while */
    int64_t nulls;
    Interned *interned; /* COL_STR: a small direct-mapped table of strings already in `data` */
} Col;

typedef struct {
    int ncols;
    Col cols[MAX_COLUMNS];
    int64_t rows;
} Table;

/* ------------------------------------------------------------------ appending (each returns 0 when out of memory) */
/* room for `extra` more bytes: the rare growth (by doubling) out of line */
int buf_grow(Buf *b, size_t extra);
SCANNER_INLINE int reserve(Buf *b, size_t extra) { return b->cap - b->len >= extra || buf_grow(b, extra); }

SCANNER_INLINE int buf_put(Buf *b, const void *bytes, size_t n) {
    if (!reserve(b, n)) return 0;
    if (n) memcpy(b->p + b->len, bytes, n);
    b->len += n;
    return 1;
}

SCANNER_INLINE void buf_free(Buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

SCANNER_INLINE void table_init(Table *t, const Column *spec, int ncols) {
    memset(t, 0, sizeof *t);
    t->ncols = ncols < MAX_COLUMNS ? ncols : MAX_COLUMNS;
    for (int i = 0; i < t->ncols; i++) t->cols[i].spec = spec[i];
}

/* the validity bit of the current row (COL_I32N) */
SCANNER_INLINE int mark(Table *t, Col *c, int valid) {
    size_t byte = (size_t)(t->rows / 8);
    while (c->validity.len <= byte) {
        unsigned char zero = 0;
        if (!buf_put(&c->validity, &zero, 1)) return 0;
    }
    if (valid)
        c->validity.p[byte] |= (unsigned char)(1u << (t->rows % 8));
    else
        c->nulls++;
    return 1;
}

SCANNER_INLINE int put_i64(Table *t, int col, int64_t value) {
    Col *c = &t->cols[col];
    int64_t v64 = value;
    int32_t v32 = (int32_t)value;
    int8_t v8 = (int8_t)value;
    switch (c->spec.type) {
    case COL_I64:
    case COL_TS: return buf_put(&c->values, &v64, 8);
    case COL_I32N: return mark(t, c, 1) && buf_put(&c->values, &v32, 4);
    case COL_I8:
    case COL_U8: return buf_put(&c->values, &v8, 1);
    default: return 0;
    }
}

SCANNER_INLINE int put_null(Table *t, int col) {
    Col *c = &t->cols[col];
    int32_t zero = 0;
    return c->spec.type == COL_I32N && mark(t, c, 0) && buf_put(&c->values, &zero, 4);
}

SCANNER_INLINE uint32_t fnv1a(const unsigned char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

/* the offset in `data` of a copy of s: one already there (interned) or a new one; 0 when out of memory */
SCANNER_INLINE int store(Col *c, const unsigned char *s, size_t n, uint32_t *offset) {
    if (!c->interned && !(c->interned = calloc(INTERN_SLOTS, sizeof(Interned)))) return 0;
    Interned *slot = &c->interned[fnv1a(s, n) % INTERN_SLOTS];
    if (slot->length == n && (size_t)slot->offset + n <= c->data.len && memcmp(c->data.p + slot->offset, s, n) == 0) {
        *offset = slot->offset;
        return 1;
    }
    if (c->data.len > INT32_MAX - n) return 0; /* views address their bytes with 32-bit offsets */
    *offset = (uint32_t)c->data.len;
    if (!buf_put(&c->data, s, n)) return 0;
    slot->offset = *offset;
    slot->length = (uint32_t)n;
    return 1;
}

SCANNER_INLINE int put_str(Table *t, int col, const unsigned char *s, size_t n) {
    Col *c = &t->cols[col];
    unsigned char view[16] = {0};
    if (c->spec.type != COL_STR || n > INT32_MAX) return 0;
    int32_t length = (int32_t)n, index = 0;
    memcpy(view, &length, 4);
    if (n <= INLINE_VIEW) {
        if (n) memcpy(view + 4, s, n);
    } else {
        uint32_t offset;
        if (!store(c, s, n, &offset)) return 0;
        memcpy(view + 4, s, 4);
        memcpy(view + 8, &index, 4);
        memcpy(view + 12, &offset, 4);
    }
    return buf_put(&c->values, view, 16);
}

SCANNER_INLINE int end_row(Table *t) {
    t->rows++;
    return 1;
}

void table_free(Table *t);
/* (schema capsule, array capsule) of a struct array of the table's columns; the buffers move into the
 * array, whose release frees them (from any thread, without the GIL). NULL with an exception set. */
PyObject *table_export(Table *t);

#endif
