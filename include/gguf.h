/*
 * gguf.h -- GGUF files, the checkpoint format of the ggml ecosystem (the one
 * llama.cpp reads), with upstream ggml's names, signatures and meaning.
 *
 * Layout (GGUF v3; v2 is read too): magic "GGUF", u32 version, i64 tensor
 * count, i64 kv count; the kv pairs (key string, i32 gguf_type, value; an
 * array is GGUF_TYPE_ARRAY, the i32 element type, a u64 count, the elements);
 * the tensor infos (name string, u32 n_dims, i64 ne[n_dims], i32 ggml_type,
 * u64 offset into the data section); zero padding to the alignment; the data
 * section, each tensor at its offset and padded to the alignment. A string is
 * a u64 byte count and the bytes, no terminator; a bool is one byte. The
 * alignment is the u32 key "general.alignment" (a power of 2), else 32.
 * Numbers are in host byte order, as upstream (little-endian on every host
 * this library targets). Tensor i sits at offset sum_{j<i} pad(nbytes_j).
 *
 * Differences from upstream ggml:
 * - Nothing aborts. Where upstream asserts (bad key or tensor id, a getter of
 *   the wrong type, NULL arguments, a duplicate tensor name, a bad alignment)
 *   the call sets ggml_last_error() and returns a sentinel: 0 / false / NULL
 *   for values, -1 for ids, GGUF_TYPE_COUNT for a gguf_type, GGML_TYPE_COUNT
 *   for a ggml_type, SIZE_MAX for gguf_get_tensor_offset; a setter that fails
 *   leaves the context unchanged.
 * - A file is untrusted: every count, length, shape, type and offset is
 *   checked against the bytes that remain before anything is allocated; a bad
 *   file gives NULL and a message (with the byte position). Keys and tensor
 *   names that contain a NUL byte are refused, and so is a file whose data
 *   section is shorter than its tensor infos say, even for a metadata-only
 *   load (upstream reads the metadata of such a file when it reads no data),
 *   so a file written with only_meta = true does not load by itself.
 * - The ggml context made by gguf_init_from_file holds one tensor per tensor
 *   info, each with its own data (no "GGUF tensor data binary blob" tensor).
 * - Tensors can be of the types ggml_new_tensor accepts (F32, F16, BF16, I32
 *   and the quantized types of docs/quant-types.md). A file with other
 *   upstream types (IQ1/IQ2/IQ3, TQ, ...; types numbered >= GGML_TYPE_COUNT
 *   = 43 are unknown) loads its metadata with params.ctx == NULL and is
 *   refused with a message naming the tensor and its type when params.ctx
 *   asks for a ggml context.
 * - gguf_write_to_file writes a temporary file next to fname, flushes it to
 *   disk and renames it over fname: a crash leaves the old file or the new
 *   one, never half of one (a symlink at fname is replaced by the file).
 * - "general.alignment" must be at most GGUF_MAX_ALIGNMENT (64 KiB): a larger
 *   one would pad every file, even an empty one, to that size.
 * - Setting or removing "general.alignment" changes the context's alignment
 *   and the tensor offsets at once (upstream only reads it from a file).
 * - gguf_add_tensor refuses a non-contiguous tensor (upstream aborts when it
 *   writes it); as upstream, the tensor's data pointer is taken when it is
 *   added (gguf_set_tensor_data changes it) and read when the file is written.
 * - gguf_init_from_file_ptr reads the GGUF from the file's position to its
 *   end (the file must be seekable); gguf_init_from_callback refuses
 *   max_expected_size 0 (upstream's reader then fails on the first read), and
 *   a callback that gives fewer bytes than asked ends the read with a message.
 */
#ifndef GGUF_H
#define GGUF_H

#include "ggml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GGUF_MAGIC   "GGUF"
#define GGUF_VERSION 3

#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"
/* The largest alignment accepted (upstream: any power of 2). A larger one
 * would pad even an empty file to an absurd size. */
#define GGUF_MAX_ALIGNMENT (1u << 16)

#define GGUF_DEFAULT_ALIGNMENT 32

#ifdef __cplusplus
extern "C" {
#endif

/* types that can be stored as GGUF kv data (numbering as upstream) */
enum gguf_type {
    GGUF_TYPE_UINT8   = 0,
    GGUF_TYPE_INT8    = 1,
    GGUF_TYPE_UINT16  = 2,
    GGUF_TYPE_INT16   = 3,
    GGUF_TYPE_UINT32  = 4,
    GGUF_TYPE_INT32   = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL    = 7,
    GGUF_TYPE_STRING  = 8,
    GGUF_TYPE_ARRAY   = 9,
    GGUF_TYPE_UINT64  = 10,
    GGUF_TYPE_INT64   = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT        /* marks the end of the enum; also "no type" */
};

struct gguf_context;

struct gguf_init_params {
    bool no_alloc;
    /* if not NULL, create a ggml_context holding one tensor per tensor info
     * (with its data unless no_alloc) and store it here */
    struct ggml_context ** ctx;
};

GGML_API struct gguf_context * gguf_init_empty(void);
GGML_API struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params);
GGML_API struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params);
/* reads up to len bytes at offset into output, returns how many it read */
typedef size_t (*gguf_reader_callback_t)(void * userdata, void * output, uint64_t offset, size_t len);
/* max_chunk_read: most bytes asked of one call (0: no limit); max_expected_size: the stream's size (or more) */
GGML_API struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata, size_t max_chunk_read,
                                                       uint64_t max_expected_size, struct gguf_init_params params);
GGML_API struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params);
GGML_API void gguf_free(struct gguf_context * ctx);

GGML_API const char * gguf_type_name(enum gguf_type type);

GGML_API uint32_t gguf_get_version    (const struct gguf_context * ctx);
GGML_API size_t   gguf_get_alignment  (const struct gguf_context * ctx);
GGML_API size_t   gguf_get_data_offset(const struct gguf_context * ctx); /* of a loaded file; 0 otherwise */

GGML_API int64_t      gguf_get_n_kv(const struct gguf_context * ctx);
GGML_API int64_t      gguf_find_key(const struct gguf_context * ctx, const char * key); /* -1 if absent */
GGML_API const char * gguf_get_key (const struct gguf_context * ctx, int64_t key_id);

GGML_API enum gguf_type gguf_get_kv_type (const struct gguf_context * ctx, int64_t key_id); /* GGUF_TYPE_ARRAY for arrays */
GGML_API enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id); /* element type */

/* the value of a scalar key of exactly that type */
GGML_API uint8_t      gguf_get_val_u8  (const struct gguf_context * ctx, int64_t key_id);
GGML_API int8_t       gguf_get_val_i8  (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint16_t     gguf_get_val_u16 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int16_t      gguf_get_val_i16 (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint32_t     gguf_get_val_u32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int32_t      gguf_get_val_i32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API float        gguf_get_val_f32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint64_t     gguf_get_val_u64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int64_t      gguf_get_val_i64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API double       gguf_get_val_f64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API bool         gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id);
GGML_API const char * gguf_get_val_str (const struct gguf_context * ctx, int64_t key_id);
GGML_API const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id); /* non-string scalars */
GGML_API size_t       gguf_get_arr_n   (const struct gguf_context * ctx, int64_t key_id); /* 1 for a scalar */

/* the elements of a non-string array (bools are one byte each) */
GGML_API const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id);
/* the i-th string of a string array */
GGML_API const char * gguf_get_arr_str (const struct gguf_context * ctx, int64_t key_id, size_t i);

GGML_API int64_t         gguf_get_n_tensors    (const struct gguf_context * ctx);
GGML_API int64_t         gguf_find_tensor      (const struct gguf_context * ctx, const char * name); /* -1 if absent */
GGML_API size_t          gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id); /* in the data section */
GGML_API const char *    gguf_get_tensor_name  (const struct gguf_context * ctx, int64_t tensor_id);
GGML_API const int64_t * gguf_get_tensor_ne    (const struct gguf_context * ctx, int64_t tensor_id); /* GGML_MAX_DIMS values */
GGML_API enum ggml_type  gguf_get_tensor_type  (const struct gguf_context * ctx, int64_t tensor_id);
GGML_API size_t          gguf_get_tensor_size  (const struct gguf_context * ctx, int64_t tensor_id); /* bytes, unpadded */

/* removes key if present; returns the id it had, or -1 */
GGML_API int64_t gguf_remove_key(struct gguf_context * ctx, const char * key);

/* overrides an existing kv pair or adds a new one; the new pair is always last */
GGML_API void gguf_set_val_u8  (struct gguf_context * ctx, const char * key, uint8_t      val);
GGML_API void gguf_set_val_i8  (struct gguf_context * ctx, const char * key, int8_t       val);
GGML_API void gguf_set_val_u16 (struct gguf_context * ctx, const char * key, uint16_t     val);
GGML_API void gguf_set_val_i16 (struct gguf_context * ctx, const char * key, int16_t      val);
GGML_API void gguf_set_val_u32 (struct gguf_context * ctx, const char * key, uint32_t     val);
GGML_API void gguf_set_val_i32 (struct gguf_context * ctx, const char * key, int32_t      val);
GGML_API void gguf_set_val_f32 (struct gguf_context * ctx, const char * key, float        val);
GGML_API void gguf_set_val_u64 (struct gguf_context * ctx, const char * key, uint64_t     val);
GGML_API void gguf_set_val_i64 (struct gguf_context * ctx, const char * key, int64_t      val);
GGML_API void gguf_set_val_f64 (struct gguf_context * ctx, const char * key, double       val);
GGML_API void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool         val);
GGML_API void gguf_set_val_str (struct gguf_context * ctx, const char * key, const char * val);

/* a new array of n elements of the given (non-string) type, copied from data */
GGML_API void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n);
/* a new array of n strings, copied */
GGML_API void gguf_set_arr_str (struct gguf_context * ctx, const char * key, const char ** data, size_t n);

/* set or add every kv pair of src */
GGML_API void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src);

/* add a tensor's info (name unique) and its data pointer; its offset follows the previous tensor */
GGML_API void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor);
/* change a tensor's type; the offsets of the tensors after it are recomputed */
GGML_API void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type);
/* where the tensor's gguf_get_tensor_size bytes are read from when the file is written */
GGML_API void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data);

/* write the context (with the tensor data unless only_meta) to fname, atomically */
GGML_API bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta);
/* writes at file's position (no temporary file); the file stays open */
GGML_API bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta);

/* size in bytes of the metadata (header, kv pairs, tensor infos, padding) */
GGML_API size_t gguf_get_meta_size(const struct gguf_context * ctx);
/* write the metadata to data (gguf_get_meta_size bytes) */
GGML_API void   gguf_get_meta_data(const struct gguf_context * ctx, void * data);

#ifdef __cplusplus
}
#endif

#endif
