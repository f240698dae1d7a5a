/* Growable column buffers and their export as Arrow C data (the Arrow PyCapsule interface), which
 * polars imports without a copy: https://arrow.apache.org/docs/format/CDataInterface.html */
#include "_scanner_arrow.h"

#include <stdlib.h>
#include <string.h>

/* the C data interface's two structures, as the specification defines them */
#define ARROW_FLAG_NULLABLE 2

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

static void col_free(Col *c) {
    buf_free(&c->values);
    buf_free(&c->validity);
    buf_free(&c->data);
    free(c->interned);
    c->interned = NULL;
}

int buf_grow(Buf *b, size_t extra) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap - b->len < extra) {
        if (cap > SIZE_MAX / 2) return 0;
        cap *= 2;
    }
    unsigned char *p = realloc(b->p, cap);
    if (!p) return 0;
    b->p = p;
    b->cap = cap;
    return 1;
}

void table_free(Table *t) {
    for (int i = 0; i < t->ncols; i++) col_free(&t->cols[i]);
}

/* ------------------------------------------------------------------ export */
typedef struct {
    Buf values, validity, data;
    int64_t sizes[1];
    const void *buffers[4];
} ColumnData;

static void release_column(struct ArrowArray *a) {
    ColumnData *d = a->private_data;
    if (d) {
        buf_free(&d->values);
        buf_free(&d->validity);
        buf_free(&d->data);
        free(d);
    }
    a->private_data = NULL;
    a->release = NULL;
}

typedef struct {
    const void *buffers[1];
} StructData;

static void release_struct(struct ArrowArray *a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        struct ArrowArray *child = a->children ? a->children[i] : NULL;
        if (child && child->release) child->release(child);
        free(child);
    }
    free(a->children);
    free(a->private_data);
    a->children = NULL;
    a->private_data = NULL;
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema *child = s->children ? s->children[i] : NULL;
        if (child && child->release) child->release(child);
        free(child);
    }
    free(s->children);
    s->children = NULL;
    s->release = NULL;
}

static void release_leaf_schema(struct ArrowSchema *s) { s->release = NULL; }

static const char *format_of(int type) {
    switch (type) {
    case COL_I64: return "l";
    case COL_TS: return "tsu:";
    case COL_I32N: return "i";
    case COL_I8: return "c";
    case COL_U8: return "C";
    default: return "vu";
    }
}

/* a non-NULL buffer (an empty column still points somewhere) */
static int present(Buf *b) {
    if (b->p) return 1;
    return reserve(b, 8);
}

static int export_column(Col *c, int64_t rows, struct ArrowArray *a, struct ArrowSchema *s) {
    ColumnData *d = calloc(1, sizeof *d);
    if (!d) return 0;
    d->values = c->values;
    d->validity = c->validity;
    d->data = c->data;
    memset(&c->values, 0, sizeof c->values);
    memset(&c->validity, 0, sizeof c->validity);
    memset(&c->data, 0, sizeof c->data);
    a->length = rows;
    a->null_count = c->nulls;
    a->buffers = d->buffers;
    a->private_data = d;
    a->release = release_column;
    if (!present(&d->values) || (c->spec.type == COL_I32N && !present(&d->validity))
        || (c->spec.type == COL_STR && !present(&d->data)))
        return 0;
    if (c->spec.type == COL_I32N) /* whole bytes of the bitmap for every row */
        while (d->validity.len * 8 < (size_t)rows)
            if (!buf_put(&d->validity, "", 1)) return 0;
    d->buffers[0] = c->spec.type == COL_I32N ? d->validity.p : NULL;
    d->buffers[1] = d->values.p;
    a->n_buffers = 2;
    if (c->spec.type == COL_STR) {
        d->sizes[0] = (int64_t)d->data.len;
        d->buffers[2] = d->data.p;
        d->buffers[3] = d->sizes;
        a->n_buffers = 4;
    }
    s->format = format_of(c->spec.type);
    s->name = c->spec.name;
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = release_leaf_schema;
    return 1;
}

static void free_schema_capsule(PyObject *capsule) {
    struct ArrowSchema *s = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (s && s->release) s->release(s);
    free(s);
}

static void free_array_capsule(PyObject *capsule) {
    struct ArrowArray *a = PyCapsule_GetPointer(capsule, "arrow_array");
    if (a && a->release) a->release(a);
    free(a);
}

PyObject *table_export(Table *t) {
    struct ArrowSchema *schema = calloc(1, sizeof *schema);
    struct ArrowArray *array = calloc(1, sizeof *array);
    PyObject *schema_capsule = NULL, *array_capsule = NULL;
    int ok = schema && array;
    if (ok) {
        schema->format = "+s";
        schema->name = "";
        schema->release = release_schema;
        array->release = release_struct;
        array->length = t->rows;
        array->n_buffers = 1;
        StructData *d = calloc(1, sizeof *d);
        array->private_data = d;
        array->buffers = d ? d->buffers : NULL;
        schema->children = calloc((size_t)t->ncols, sizeof *schema->children);
        array->children = calloc((size_t)t->ncols, sizeof *array->children);
        ok = d && schema->children && array->children;
        for (int i = 0; ok && i < t->ncols; i++) {
            schema->children[i] = calloc(1, sizeof(struct ArrowSchema));
            array->children[i] = calloc(1, sizeof(struct ArrowArray));
            schema->n_children = array->n_children = i + 1;
            ok = schema->children[i] && array->children[i]
                 && export_column(&t->cols[i], t->rows, array->children[i], schema->children[i]);
        }
    }
    if (ok) schema_capsule = PyCapsule_New(schema, "arrow_schema", free_schema_capsule);
    if (schema_capsule) array_capsule = PyCapsule_New(array, "arrow_array", free_array_capsule);
    if (array_capsule) return Py_BuildValue("(NN)", schema_capsule, array_capsule);
    if (schema_capsule) {
        Py_DECREF(schema_capsule); /* its destructor releases and frees the schema */
    } else if (schema) {
        if (schema->release) schema->release(schema);
        free(schema);
    }
    if (array) {
        if (array->release) array->release(array);
        free(array);
    }
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
}
