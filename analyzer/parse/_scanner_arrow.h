/* Growable column buffers and their export as Arrow C data (the Arrow PyCapsule interface). */
#ifndef DGTRACE_SCANNER_ARROW_H
#define DGTRACE_SCANNER_ARROW_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

/* bytes that grow by doubling; `p` is NULL until the first byte */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} Buf;

int buf_put(Buf *b, const void *bytes, size_t n);
void buf_free(Buf *b);

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

void table_init(Table *t, const Column *spec, int ncols);
/* the value of column `col` in the current row (converted to the column's width); 0: out of memory */
int put_i64(Table *t, int col, int64_t value);
int put_null(Table *t, int col);
int put_str(Table *t, int col, const unsigned char *s, size_t n);
/* the current row is complete */
int end_row(Table *t);
void table_free(Table *t);
/* (schema capsule, array capsule) of a struct array of the table's columns; the buffers move into the
 * array, whose release frees them (from any thread, without the GIL). NULL with an exception set. */
PyObject *table_export(Table *t);

#endif
