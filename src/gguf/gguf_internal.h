/* gguf_internal.h -- the in-memory form of a GGUF file (gguf.h), shared by
 * its files (not installed): gguf.c (types, the context and its getters),
 * gguf_read.c (parsing untrusted bytes) and gguf_write.c (setters and
 * serialisation). */
#ifndef GGMLR_GGUF_INTERNAL_H
#define GGMLR_GGUF_INTERNAL_H

#include "gguf.h"
#include "core/internal.h"

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

struct gguf_str {
    uint64_t n;    /* bytes, which may include NULs */
    char *   data; /* n bytes and a terminating NUL */
};

struct gguf_kv {
    char *         key;
    enum gguf_type type;     /* of the value, or of the elements of an array */
    bool           is_array;
    size_t         n;        /* elements; 1 for a scalar */
    void *         data;     /* n values of ggmlr_gguf_type_size bytes, or n struct gguf_str */
};

struct gguf_tensor_info {
    char           name[GGML_MAX_NAME];
    enum ggml_type type;
    int64_t        ne[GGML_MAX_DIMS];
    uint64_t       nbytes;
    uint64_t       offset;  /* from the start of the data section */
    const void *   data;    /* what gguf_write_to_file writes for it */
};

struct gguf_context {
    uint32_t version;
    size_t   alignment;
    size_t   data_offset;  /* of the data section in the file it was read from */
    struct gguf_kv *          kv;
    size_t                    n_kv, cap_kv;
    struct gguf_tensor_info * info;
    size_t                    n_info, cap_info;
};

/* The scalar value types, one X(suffix, C type, stored type, gguf type) each:
 * gguf.c makes the getter gguf_get_val_<suffix> of each, gguf_write.c the
 * setter gguf_set_val_<suffix>. A bool is stored as one byte. */
#define GGUF_SCALAR_TYPES(X)                       \
    X(u8,   uint8_t,  uint8_t,  GGUF_TYPE_UINT8)   \
    X(i8,   int8_t,   int8_t,   GGUF_TYPE_INT8)    \
    X(u16,  uint16_t, uint16_t, GGUF_TYPE_UINT16)  \
    X(i16,  int16_t,  int16_t,  GGUF_TYPE_INT16)   \
    X(u32,  uint32_t, uint32_t, GGUF_TYPE_UINT32)  \
    X(i32,  int32_t,  int32_t,  GGUF_TYPE_INT32)   \
    X(f32,  float,    float,    GGUF_TYPE_FLOAT32) \
    X(u64,  uint64_t, uint64_t, GGUF_TYPE_UINT64)  \
    X(i64,  int64_t,  int64_t,  GGUF_TYPE_INT64)   \
    X(f64,  double,   double,   GGUF_TYPE_FLOAT64) \
    X(bool, bool,     int8_t,   GGUF_TYPE_BOOL)

/* gguf.c: bytes of one value of a type (0 for strings and arrays) */
size_t ggmlr_gguf_type_size(enum gguf_type type);
/* gguf.c: bytes of a tensor of this type and shape into *nbytes, or why it has none */
const char * ggmlr_gguf_tensor_nbytes(enum ggml_type type, const int64_t * ne, uint64_t * nbytes);
/* gguf.c: free n counted strings and their array */
void ggmlr_gguf_free_strings(struct gguf_str * s, size_t n);
/* gguf.c: free what a kv pair owns (its key and values), not the pair */
void ggmlr_gguf_kv_free(struct gguf_kv * kv);

#endif
